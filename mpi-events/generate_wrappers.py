#!/usr/bin/env python3
"""Generates adaptrace's MPI wrappers from mpi.api (the one description).

Usage: generate_wrappers.py API_FILE OUTPUT_DIR

Writes into OUTPUT_DIR:
  mpi_functions.h    enum of the wrapped functions (ADT_MPI_FN_<name>)
  mpi_functions.c    their names and region roles
  wrappers_c.c       MPI_X -> the next MPI_X (next.h), else PMPI_X
  wrappers_fortran.c mpi_x_ (and mpi_x, mpi_x__, MPI_X) -> the next mpi_x_, else pmpi_x_
  wrappers_f08.c     mpi_x_f08_ -> the next mpi_x_f08_, else pmpi_x_f08_ (Open MPI's mpi_f08 module)
  adaptrace.map      the linker version script: exactly these entry points
  wrapped.txt        one line per entry point symbol (for tests and docs)
"""
import os
import re
import shlex
import sys

ROLES = {
    "function": "ADT_ROLE_FUNCTION",
    "p2p": "ADT_ROLE_POINT2POINT",
    "barrier": "ADT_ROLE_BARRIER",
    "one2all": "ADT_ROLE_COLL_ONE2ALL",
    "all2one": "ADT_ROLE_COLL_ALL2ONE",
    "all2all": "ADT_ROLE_COLL_ALL2ALL",
    "other": "ADT_ROLE_COLL_OTHER",
    "file_io": "ADT_ROLE_FILE_IO",
    "file_io_metadata": "ADT_ROLE_FILE_IO_METADATA",
}

# What a NAME field may say after the name, in brackets: the function has
# no mpi_f08 binding (deprecated before MPI 3.0), or no ierror argument in
# Fortran (MPI_PCONTROL); how its MPI_COMM_WORLD argument is passed on in
# an MPMD launch, where the application's world is narrowed to its own
# processes (adt_mpi_world, comms.h; every other MPI_Comm argument is
# narrowed): "real world", as given (MPI_Abort ends the whole job);
# "world attributes", narrowed unless the attribute is one MPI caches on
# MPI_COMM_WORLD itself (MPI_APPNUM, MPI_TAG_UB, ...); "both worlds",
# narrowed, and done on MPI_COMM_WORLD too (an error handler: MPI raises
# errors outside any communicator there).
BINDING_NOTES = ["no mpi_f08", "no ierror", "real world", "world attributes", "both worlds"]

# Parameters each record kind takes (names are for error messages only).
RECORD_KINDS = {
    "plain": [],
    "init": [],
    "init_thread": [],
    "finalize": [],
    "abort": [],
    "send": ["count", "datatype", "dest", "tag", "comm"],
    "recv": ["source", "tag", "comm", "status"],
    "sendrecv": ["sendcount", "sendtype", "dest", "sendtag", "comm", "source", "recvtag", "status"],
    "isend": ["count", "datatype", "dest", "tag", "comm", "request"],
    "irecv": ["source", "tag", "comm", "request"],
    "send_init": ["count", "datatype", "dest", "tag", "comm", "request"],
    "recv_init": ["source", "tag", "comm", "request"],
    "start": ["request"],
    "startall": ["count", "requests"],
    "mprobe": ["source", "tag", "comm", "message"],
    "improbe": ["source", "tag", "comm", "flag", "message"],
    "mrecv": ["message", "status"],
    "imrecv": ["message", "request"],
    "collective": ["op", "root", "comm", "sent", "received"],
    "icollective": ["op", "root", "comm", "sent", "received", "request"],
    "wait": ["request", "status"],
    "test": ["request", "flag", "status"],
    "waitall": ["count", "requests", "statuses"],
    "testall": ["count", "requests", "flag", "statuses"],
    "waitany": ["count", "requests", "index", "status"],
    "testany": ["count", "requests", "index", "flag", "status"],
    "waitsome": ["incount", "requests", "outcount", "indices", "statuses"],
    "testsome": ["incount", "requests", "outcount", "indices", "statuses"],
    "request_free": ["request"],
    "cancel": ["request"],
    "comm_new": ["parent", "newcomm"],
    "comm_idup": ["parent", "newcomm"],
    "comm_free": ["comm"],
    "comm_name": ["comm"],
    "spawn": ["root", "comm"],
    "win_create": ["op", "comm", "win"],
    "win_free": ["win"],
    "win_fence": ["win"],
    "win_post": ["group", "win"],
    "win_start": ["group", "win"],
    "win_complete": ["win"],
    "win_wait": ["win"],
    "win_test": ["win", "flag"],
    "win_lock": ["lock_type", "rank", "win"],
    "win_lock_all": ["win"],
    "win_unlock": ["rank", "win"],
    "win_unlock_all": ["win"],
    "win_flush": ["rank", "win"],
    "win_flush_all": ["win"],
    "win_flush_local": ["rank", "win"],
    "win_flush_local_all": ["win"],
    "win_sync": ["win"],
    "rma_put": ["count", "datatype", "target", "win"],
    "rma_get": ["count", "datatype", "target", "win"],
    "rma_atomic": ["type", "sent", "received", "target", "win"],
    "rma_rput": ["count", "datatype", "target", "win", "request"],
    "rma_rget": ["count", "datatype", "target", "win", "request"],
    "rma_ratomic": ["type", "sent", "received", "target", "win", "request"],
    "io_open": ["comm", "filename", "amode", "file"],
    "io_close": ["file"],
    "io_delete": ["filename"],
    "io_seek": ["file", "offset", "whence"],
    "io_seek_shared": ["file", "offset", "whence"],
    "io_sync": ["file"],
    "io_op": ["mode", "flags", "file", "count", "datatype", "status"],
    "io_iop": ["mode", "flags", "file", "count", "datatype", "request"],
    "io_split_begin": ["mode", "file", "count", "datatype"],
    "io_split_end": ["file", "status"],
}


class Param:
    def __init__(self, text):
        match = re.fullmatch(r"\s*(.*?)\s*\b([A-Za-z_]\w*)\s*((?:\[\w*\])*)\s*", text)
        if not match:
            raise ValueError(f"cannot parse parameter '{text}'")
        self.ctype, self.name, self.array = match.group(1), match.group(2), match.group(3)
        self.base = self.ctype.replace("const", "").replace("*", "").strip()
        self.is_buffer = "void" in self.ctype
        # Every CHARACTER argument, one string or an array of them, is one
        # address in Fortran with its length passed after all arguments.
        self.is_string = self.base == "char"
        # A callback (MPI_User_function *, ...): a Fortran procedure, whose
        # address is passed as is.
        self.is_procedure = self.base.endswith("_function")
        self.indirect = "*" in self.ctype or bool(self.array)

    def c_decl(self):
        sep = "" if self.ctype.endswith("*") else " "
        return f"{self.ctype}{sep}{self.name}{self.array}"

    def f_decl(self):
        if self.is_buffer:
            return f"void *{self.name}"
        if self.is_string:
            return f"char *{self.name}"
        if self.base == "MPI_Offset":
            return f"MPI_Offset *{self.name}"
        if self.is_procedure:
            return f"void (*{self.name})(void)"
        return f"MPI_Fint *{self.name}"


class Function:
    def __init__(self, line, number, family):
        self.family = family  # the "## " heading above it
        fields = [f.strip() for f in line.split("|")]
        if len(fields) not in (4, 5):
            raise ValueError(f"line {number}: expected 'NAME | ROLE | RECORD | C PARAMETERS [| FORTRAN PARAMETERS]'")
        role, record = fields[1], fields[2]
        named = re.fullmatch(r"(MPI_[A-Z][a-z0-9_]*)((?:\s*\[[^]]*\])*)", fields[0])
        if not named:
            raise ValueError(f"line {number}: '{fields[0]}' is not an MPI function name")
        self.name = named.group(1)
        notes = re.findall(r"\[([^]]*)\]", named.group(2))
        unknown = [note for note in notes if note not in BINDING_NOTES]
        if unknown:
            raise ValueError(f"line {number}: binding note '{unknown[0]}' (accepted: {', '.join(BINDING_NOTES)})")
        self.has_f08 = "no mpi_f08" not in notes
        self.has_ierror = "no ierror" not in notes
        self.world = next((note for note in notes if "world" in note), "narrowed")
        if role not in ROLES:
            raise ValueError(f"line {number}: role '{role}' (accepted: {', '.join(ROLES)})")
        self.role = ROLES[role]
        words = shlex.split(record)
        self.kind, self.args = words[0], words[1:]
        if self.kind not in RECORD_KINDS:
            raise ValueError(f"line {number}: record kind '{self.kind}' (accepted: {', '.join(RECORD_KINDS)})")
        expected = RECORD_KINDS[self.kind]
        if len(self.args) != len(expected):
            raise ValueError(f"line {number}: {self.kind} takes {' '.join(expected) or 'nothing'}, got '{' '.join(self.args)}'")
        c_params = split_params(fields[3])
        # A variadic C function (MPI_Pcontrol): the wrapper takes the extra
        # arguments but cannot pass them on (C has no way to forward them).
        self.variadic = bool(c_params) and c_params[-1] == "..."
        self.params = [Param(p) for p in c_params[:-1 if self.variadic else None]]
        self.fparams = [Param(p) for p in split_params(fields[4])] if len(fields) == 5 else self.params
        self.by_name = {p.name: p for p in self.params + self.fparams}
        if not self.has_ierror and self.kind != "plain":
            raise ValueError(f"line {number}: only a plain record can do without ierror (its records read it)")
        self.fortran = self.name.lower()

    @property
    def enum(self):
        return f"ADT_MPI_FN_{self.name[4:].upper()}"

    def fortran_symbols(self):
        return [self.fortran + "_", self.fortran, self.fortran + "__", self.name.upper()]

    def f08_symbols(self):
        return [self.fortran + "_f08_"] if self.has_f08 else []


def split_params(text):
    return [p for p in (s.strip() for s in text.split(",")) if p]


def parse(path):
    functions = []
    family = ""
    with open(path) as stream:
        for number, line in enumerate(stream, 1):
            line = line.strip()
            if line.startswith("## "):
                family = line[3:].strip()
            elif line and not line.startswith("#"):
                functions.append(Function(line, number, family))
    names = [f.name for f in functions]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ValueError(f"{path}: described twice: {', '.join(sorted(duplicates))}")
    return functions


class CLanguage:
    """Values of the parameters as the C binding passes them."""
    fortran = False
    status_ignore = "MPI_STATUS_IGNORE"
    statuses_ignore = "MPI_STATUSES_IGNORE"
    status_type = "MPI_Status"
    index_base = 0

    def value(self, fn, name):
        return name

    def handle(self, kind, expression):
        return expression

    def status_c(self, used, lines):
        return used

    def statuses_c(self, used, count, lines):
        return used

    def save_requests(self, array, count):
        return f"adt_mpi_scratch_save_requests(&scratch, {array}, {count});"

    def string_c(self, name, lines):
        return name

    def expression(self, fn, text):
        text = re.sub(r"\binplace\(", "adt_mpi_in_place(", text)
        text = re.sub(r"\bwsum\(", "adt_mpi_weighted_sum(N, ", text)
        text = re.sub(r"\bsum\(", "adt_mpi_sum(N, ", text)
        return re.sub(r"\btsize\(", "adt_mpi_type_size(", text)


class FortranLanguage(CLanguage):
    """Values of the parameters converted from the Fortran binding."""
    fortran = True
    status_ignore = "MPI_F_STATUS_IGNORE"
    statuses_ignore = "MPI_F_STATUSES_IGNORE"
    status_type = "MPI_Fint"
    index_base = 1

    def value(self, fn, name):
        param = fn.by_name[name]
        if param.is_buffer:
            return name
        if param.indirect:
            return f"((int *){name})"
        converters = {"MPI_Datatype": "PMPI_Type_f2c", "MPI_Comm": "PMPI_Comm_f2c", "MPI_Win": "PMPI_Win_f2c",
                      "MPI_Group": "PMPI_Group_f2c", "MPI_File": "PMPI_File_f2c",
                      "MPI_Errhandler": "PMPI_Errhandler_f2c"}
        if param.base in converters:
            return f"{converters[param.base]}(*{name})"
        return f"(*{name})"

    def handle(self, kind, expression):
        return f"PMPI_{kind}_f2c({expression})"

    def status_c(self, used, lines):
        lines.append(f"MPI_Status status_converted;")
        lines.append(f"PMPI_Status_f2c({used}, &status_converted);")
        return "&status_converted"

    def statuses_c(self, used, count, lines):
        lines.append(f"adt_mpi_scratch_convert_statuses(&scratch, {used}, {count});")
        return "scratch.statuses"

    def save_requests(self, array, count):
        return f"adt_mpi_scratch_save_fortran_requests(&scratch, {array}, {count});"

    def string_c(self, name, lines):
        lines.append(f"char {name}_c[ADT_MPI_FILE_NAME_MAX];")
        lines.append(f"adt_mpi_fortran_string({name}_c, sizeof {name}_c, {name}, {name}_length);")
        return f"{name}_c"

    def expression(self, fn, text):
        text = re.sub(r"\binplace\(", "adt_mpi_in_place_fortran(", text)
        text = re.sub(r"\bwsum\(", "adt_mpi_weighted_sum_fortran(N, ", text)
        text = re.sub(r"\bsum\(", "adt_mpi_sum(N, ", text)
        text = re.sub(r"\btsize\(", "adt_mpi_type_size(", text)
        names = sorted((p.name for p in fn.params if p.name in fn.by_name), key=len, reverse=True)
        for name in names:
            text = re.sub(rf"(?<![\w.>]){name}\b(?!\()", lambda m, n=name: self.value(fn, n), text)
        return text


class Body:
    """What a wrapper does around the call it passes on (to the next
    definition of its entry point, next.h); both languages share it."""

    def __init__(self):
        self.pre = []
        self.post = []
        self.replace = {}      # parameter name -> what is passed on instead
        self.before_location = []
        self.leave = True
        self.scratch = None    # count expression when a scratch area is needed


def status_setup(lang, body, name, fn):
    own = "status_own"
    if lang.fortran:
        body.pre.append(f"MPI_Fint {own}[ADT_MPI_FORTRAN_STATUS_SIZE];")
        body.pre.append(f"MPI_Fint *status_used = {name} == {lang.status_ignore} ? {own} : {name};")
    else:
        body.pre.append(f"MPI_Status {own};")
        body.pre.append(f"MPI_Status *status_used = {name} == {lang.status_ignore} ? &{own} : {name};")
    body.replace[name] = "status_used"
    return lang.status_c("status_used", body.post)


def statuses_setup(lang, body, name):
    if lang.fortran:
        body.pre.append(f"MPI_Fint *statuses_used = {name} == {lang.statuses_ignore} ? scratch.fortran_statuses : {name};")
    else:
        body.pre.append(f"MPI_Status *statuses_used = {name} == {lang.statuses_ignore} ? scratch.statuses : {name};")
    body.replace[name] = "statuses_used"


def root_field(lang, fn, root):
    return "ADT_MPI_NO_ROOT" if root == "none" else lang.value(fn, root)


def collective_sizes(lang, fn, body, op, root, comm, sent, received):
    body.post.append(f"const adt_mpi_comm_info *info = adt_mpi_comm_lookup({lang.value(fn, comm)});")
    body.post.append("if (info) {")
    body.post.append(f"    const int root_rank = {root_field(lang, fn, root)};")
    body.post.append("    const uint64_t N = (uint64_t)adt_mpi_comm_peers(info), me = (uint64_t)info->rank;")
    body.post.append("    const bool is_root = adt_mpi_is_root(info, root_rank);")
    body.post.append("    (void)N; (void)me; (void)is_root;")
    body.post.append(f"    const uint64_t sent = (uint64_t)({lang.expression(fn, sent)});")
    body.post.append(f"    const uint64_t received = (uint64_t)({lang.expression(fn, received)});")


def build_body(fn, lang):
    body = Body()
    a = fn.args
    v = lambda name: lang.value(fn, name)
    ok = "*ierr == MPI_SUCCESS" if lang.fortran else "next_result == MPI_SUCCESS"
    request_now = lambda name: lang.handle("Request", f"*{name}")
    kind = fn.kind
    if kind in ("init", "init_thread"):
        body.before_location.append("adt_mpi_init_begin();")
        body.post.append(f"if ({ok}) adt_mpi_init_end(&call);")
    elif kind == "abort":
        body.pre.append("adt_runtime_abort();")
    elif kind == "finalize":
        body.pre.append(f"adt_mpi_finalize_measurement(&call, {fn.enum});")
        body.leave = False
    elif kind == "send":
        body.pre.append(f"adt_mpi_send(&call, {v(a[0])}, {v(a[1])}, {v(a[2])}, {v(a[3])}, {v(a[4])});")
    elif kind == "recv":
        status = status_setup(lang, body, a[3], fn)
        body.post.append(f"adt_mpi_recv(&call, {status}, adt_mpi_comm_lookup({v(a[2])}), {v(a[0])}, {v(a[1])});")
    elif kind == "sendrecv":
        body.pre.append(f"adt_mpi_send(&call, {v(a[0])}, {v(a[1])}, {v(a[2])}, {v(a[3])}, {v(a[4])});")
        status = status_setup(lang, body, a[7], fn)
        body.post.append(f"adt_mpi_recv(&call, {status}, adt_mpi_comm_lookup({v(a[4])}), {v(a[5])}, {v(a[6])});")
    elif kind in ("isend", "send_init"):
        persistent = "true" if kind == "send_init" else "false"
        body.post.append(f"if ({ok}) adt_mpi_isend(&call, {v(a[0])}, {v(a[1])}, {v(a[2])}, {v(a[3])}, {v(a[4])}, "
                         f"{request_now(a[5])}, {persistent});")
    elif kind in ("irecv", "recv_init"):
        persistent = "true" if kind == "recv_init" else "false"
        body.post.append(f"if ({ok} && {v(a[0])} != MPI_PROC_NULL) adt_mpi_irecv(&call, "
                         f"adt_mpi_comm_lookup({v(a[2])}), {v(a[0])}, {v(a[1])}, {request_now(a[3])}, {persistent});")
    elif kind == "start":
        body.post.append(f"if ({ok}) adt_mpi_start(&call, {request_now(a[0])});")
    elif kind == "startall":
        body.post.append(f"if ({ok}) {{")
        body.post.append(f"    for (int i = 0; i < {v(a[0])}; ++i)")
        body.post.append(f"        adt_mpi_start(&call, {lang.handle('Request', f'{a[1]}[i]')});")
        body.post.append("}")
    elif kind in ("mprobe", "improbe"):
        message = a[-1]
        condition = ok if kind == "mprobe" else f"{ok} && *{a[3]}"
        body.post.append(f"if ({condition}) adt_mpi_message_probed(adt_mpi_comm_lookup({v(a[2])}), {v(a[0])}, "
                         f"{v(a[1])}, {lang.handle('Message', f'*{message}')});")
    elif kind == "mrecv":
        body.pre.append(f"const adt_mpi_probed_message *probed = adt_mpi_message_take({lang.handle('Message', f'*{a[0]}')});")
        status = status_setup(lang, body, a[1], fn)
        body.post.append(f"adt_mpi_mrecv(&call, {status}, probed);")
    elif kind == "imrecv":
        body.pre.append(f"const adt_mpi_probed_message *probed = adt_mpi_message_take({lang.handle('Message', f'*{a[0]}')});")
        body.post.append(f"if ({ok}) adt_mpi_imrecv(&call, probed, {request_now(a[1])});")
    elif kind == "collective":
        op, root, comm, sent, received = a
        body.pre.append(f"adt_mpi_collective_begin(&call, {v(comm)});")
        collective_sizes(lang, fn, body, op, root, comm, sent, received)
        body.post.append(f"    adt_mpi_collective_end(&call, OTF2_COLLECTIVE_OP_{op}, info, root_rank, sent, received);")
        body.post.append("}")
    elif kind == "icollective":
        op, root, comm, sent, received, request = a
        collective_sizes(lang, fn, body, op, root, comm, sent, received)
        body.post.append(f"    if ({ok}) adt_mpi_icollective(&call, OTF2_COLLECTIVE_OP_{op}, info, root_rank, sent, "
                         f"received, {request_now(request)});")
        body.post.append("}")
    elif kind in ("wait", "test"):
        body.pre.append(f"const MPI_Request saved = {request_now(a[0])};")
        status = status_setup(lang, body, a[-1], fn)
        if kind == "wait":
            body.post.append(f"adt_mpi_complete(&call, saved, {status});")
        else:
            body.post.append(f"if (*{a[1]}) adt_mpi_complete(&call, saved, {status});")
            body.post.append("else adt_mpi_tested(&call, &saved, 1);")
    elif kind in ("waitall", "testall"):
        count, requests, statuses = v(a[0]), a[1], a[-1]
        body.scratch = count
        body.pre.append(lang.save_requests(requests, count))
        statuses_setup(lang, body, statuses)
        converted = lang.statuses_c("statuses_used", count, body.post if kind == "waitall" else [])
        if kind == "waitall":
            body.post.append(f"adt_mpi_complete_all(&call, scratch.requests, {converted}, {count});")
        else:
            body.post.append(f"if (*{a[2]}) {{")
            if lang.fortran:
                body.post.append(f"    adt_mpi_scratch_convert_statuses(&scratch, statuses_used, {count});")
            body.post.append(f"    adt_mpi_complete_all(&call, scratch.requests, {converted}, {count});")
            body.post.append("} else {")
            body.post.append(f"    adt_mpi_tested(&call, scratch.requests, {count});")
            body.post.append("}")
    elif kind in ("waitany", "testany"):
        count, requests, index, status_name = v(a[0]), a[1], a[2], a[-1]
        body.scratch = count
        body.pre.append(lang.save_requests(requests, count))
        status = status_setup(lang, body, status_name, fn)
        completed = f"scratch.requests && *{index} != MPI_UNDEFINED"
        if kind == "testany":
            completed = f"*{a[3]} && {completed}"
        body.post.append(f"if ({completed}) adt_mpi_complete(&call, scratch.requests[*{index} - {lang.index_base}], {status});")
        if kind == "testany":
            body.post.append(f"else if (!*{a[3]}) adt_mpi_tested(&call, scratch.requests, {count});")
    elif kind in ("waitsome", "testsome"):
        count, requests, outcount, indices, statuses = v(a[0]), a[1], a[2], a[3], a[4]
        body.scratch = count
        body.pre.append(lang.save_requests(requests, count))
        statuses_setup(lang, body, statuses)
        body.post.append(f"if (*{outcount} != MPI_UNDEFINED && *{outcount} > 0) {{")
        inner = []
        converted = lang.statuses_c("statuses_used", f"*{outcount}", inner)
        body.post.extend("    " + line for line in inner)
        body.post.append(f"    adt_mpi_complete_some(&call, scratch.requests, (const int *){indices}, *{outcount}, "
                         f"{converted}, {lang.index_base});")
        if kind == "testsome":
            body.post.append(f"}} else if (*{outcount} == 0) {{")
            body.post.append(f"    adt_mpi_tested(&call, scratch.requests, {count});")
        body.post.append("}")
    elif kind == "request_free":
        body.pre.append(f"adt_mpi_request_free(&call, {request_now(a[0])});")
    elif kind == "cancel":
        body.pre.append(f"adt_mpi_cancel({request_now(a[0])});")
    elif kind == "comm_new":
        body.post.append(f"if ({ok}) adt_mpi_comm_created({v(a[0])}, {lang.handle('Comm', f'*{a[1]}')});")
    elif kind == "comm_idup":
        body.pre.append(f"const adt_mpi_comm_key key = adt_mpi_comm_agree_key({v(a[0])});")
        body.post.append(f"if ({ok}) adt_mpi_comm_duplicated({v(a[0])}, {lang.handle('Comm', f'*{a[1]}')}, key);")
    elif kind == "comm_name":
        body.post.append(f"if ({ok}) adt_mpi_comm_named({v(a[0])});")
    elif kind == "spawn":
        body.post.append(f"if ({ok}) adt_mpi_spawned({fn.enum}, {v(a[0])}, {v(a[1])});")
    elif kind == "comm_free":
        body.pre.append(f"const adt_mpi_freed_comm freed = adt_mpi_comm_free_begin({lang.handle('Comm', f'*{a[0]}')});")
        body.post.append(f"adt_mpi_comm_free_end(&freed, {ok});")
    elif kind.startswith("io_"):
        io_body(fn, lang, body, ok)
    else:
        rma_body(fn, lang, body, ok)
    return body


# The one-sided synchronisation kinds: what each writes before (pre) and
# after (post) the call passed on; {0}, {1}, ... are its RECORD arguments as
# C values, {ok} whether it succeeded.
RMA_ALL = "ADT_MPI_ALL_TARGETS"
PROCESS_AND_MEMORY = "OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY"
RMA_SYNCHRONISATION = {
    "win_fence": [("pre", f"adt_mpi_rma_collective_begin(&call, {{0}}, {PROCESS_AND_MEMORY});"),
                  ("post", "adt_mpi_win_fence_end(&call, {0});")],
    "win_post": [("post", "if ({ok}) adt_mpi_win_group_defined({1}, {0}, true, &call);")],
    "win_start": [("post", "if ({ok}) adt_mpi_win_group_defined({1}, {0}, false, &call);")],
    "win_complete": [("post", "adt_mpi_win_epoch_end(&call, {0}, false, true);")],
    "win_wait": [("post", "adt_mpi_win_epoch_end(&call, {0}, true, true);")],
    "win_test": [("post", "if ({ok}) adt_mpi_win_epoch_end(&call, {0}, true, *{1} != 0);")],
    "win_lock": [("pre", "adt_mpi_win_lock(&call, {2}, {1}, {0});")],
    "win_lock_all": [("pre", f"adt_mpi_win_lock(&call, {{0}}, {RMA_ALL}, MPI_LOCK_SHARED);")],
    "win_unlock": [("post", "adt_mpi_win_unlock(&call, {1}, {0});")],
    "win_unlock_all": [("post", f"adt_mpi_win_unlock(&call, {{0}}, {RMA_ALL});")],
    "win_flush": [("post", "adt_mpi_win_flush(&call, {1}, {0}, true);")],
    "win_flush_local": [("post", "adt_mpi_win_flush(&call, {1}, {0}, false);")],
    "win_flush_all": [("post", f"adt_mpi_win_flush(&call, {{0}}, {RMA_ALL}, true);")],
    "win_flush_local_all": [("post", f"adt_mpi_win_flush(&call, {{0}}, {RMA_ALL}, false);")],
    "win_sync": [("post", "adt_mpi_win_sync(&call, {0});")],
}


def rma_body(fn, lang, body, ok):
    a = fn.args
    v = lambda name: lang.value(fn, name)
    kind = fn.kind
    if kind in RMA_SYNCHRONISATION:
        values = [v(name) for name in a]
        for phase, template in RMA_SYNCHRONISATION[kind]:
            (body.pre if phase == "pre" else body.post).append(template.format(*values, ok=ok))
    elif kind == "win_create":
        op, comm, new = a
        body.pre.append(f"adt_mpi_win_create_begin(&call, {v(comm)});")
        body.post.append(f"if ({ok}) adt_mpi_win_created(&call, {v(comm)}, {lang.handle('Win', f'*{new}')}, "
                         f"OTF2_COLLECTIVE_OP_{op});")
    elif kind == "win_free":
        body.pre.append("adt_mpi_freed_window freed;")
        body.pre.append(f"const bool traced = adt_mpi_win_free_begin(&call, {lang.handle('Win', f'*{a[0]}')}, &freed);")
        body.post.append(f"if (traced) adt_mpi_win_free_end(&call, &freed, {ok});")
    elif kind in ("rma_put", "rma_get", "rma_rput", "rma_rget"):
        count, datatype, target, window = a[:4]
        record = "ADT_REC_RMA_PUT" if kind in ("rma_put", "rma_rput") else "ADT_REC_RMA_GET"
        size = f"(uint64_t){v(count)} * adt_mpi_type_size({v(datatype)})"
        sizes = f"{size}, 0" if record == "ADT_REC_RMA_PUT" else f"0, {size}"
        rma_operation(lang, body, ok, record, "0", window, target, sizes, a[4] if len(a) == 5 else None, v)
    elif kind in ("rma_atomic", "rma_ratomic"):
        atomic, sent, received, target, window = a[:5]
        sizes = f"(uint64_t)({lang.expression(fn, sent)}), (uint64_t)({lang.expression(fn, received)})"
        rma_operation(lang, body, ok, "ADT_REC_RMA_ATOMIC", f"OTF2_RMA_ATOMIC_TYPE_{atomic}", window, target, sizes,
                      a[5] if len(a) == 6 else None, v)


def rma_operation(lang, body, ok, record, atomic, window, target, sizes, request, v):
    """Blocking-call operations are recorded at the Enter, as Score-P does;
    request-based ones once the call returned their request."""
    if request is None:
        body.pre.append(f"adt_mpi_rma_op(&call, {record}, {atomic}, {v(window)}, {v(target)}, {sizes});")
    else:
        body.post.append(f"if ({ok}) adt_mpi_rma_request_op(&call, {record}, {atomic}, {v(window)}, {v(target)}, "
                         f"{sizes}, {lang.handle('Request', f'*{request}')});")


def io_body(fn, lang, body, ok):
    """MPI-IO (io.c): operations begin at the Enter with the bytes asked
    for; blocking ones complete at the Leave with the bytes of their status,
    nonblocking ones are issued and complete with their request, split
    collectives complete in their _end call."""
    a = fn.args
    v = lambda name: lang.value(fn, name)
    kind = fn.kind
    begin = "const adt_mpi_io_op op = adt_mpi_io_begin(&call, {file}, OTF2_IO_OPERATION_MODE_{mode}, {flags}, {bytes});"
    if kind in ("io_op", "io_iop", "io_split_begin"):
        mode, flags, file, count, datatype = (a[0], "COLLECTIVE", *a[1:4]) if kind == "io_split_begin" else a[:5]
        flags = " | ".join(f"OTF2_IO_OPERATION_FLAG_{flag}" for flag in
                           [flags] + (["NON_BLOCKING"] if kind != "io_op" else []))
        bytes = f"(uint64_t){v(count)} * adt_mpi_type_size({v(datatype)})"
        body.pre.append(begin.format(file=v(file), mode=mode, flags=flags, bytes=bytes))
    if kind == "io_op":
        status = status_setup(lang, body, a[5], fn)
        body.post.append(f"adt_mpi_io_complete(&call, &op, adt_mpi_io_transferred({status}, {ok}));")
    elif kind == "io_iop":
        body.post.append(f"adt_mpi_io_issued(&call, &op, {lang.handle('Request', f'*{a[5]}')}, {ok});")
    elif kind == "io_split_begin":
        body.post.append(f"adt_mpi_io_split_begun(&call, {v(a[1])}, &op, {ok});")
    elif kind == "io_split_end":
        status = status_setup(lang, body, a[1], fn)
        body.post.append(f"adt_mpi_io_split_ended(&call, {v(a[0])}, {status}, {ok});")
    elif kind == "io_sync":
        body.pre.append(begin.format(file=v(a[0]), mode="FLUSH", flags="OTF2_IO_OPERATION_FLAG_COLLECTIVE",
                                     bytes="OTF2_UNDEFINED_UINT64"))
        body.post.append("adt_mpi_io_complete(&call, &op, OTF2_UNDEFINED_UINT64);")
    elif kind in ("io_seek", "io_seek_shared"):
        shared = "true" if kind == "io_seek_shared" else "false"
        body.post.append(f"if ({ok}) adt_mpi_file_seeked(&call, {v(a[0])}, {v(a[1])}, {v(a[2])}, {shared});")
    elif kind == "io_open":
        comm, filename, amode, file = a
        name = lang.string_c(filename, body.post)
        body.post.append(f"if ({ok}) adt_mpi_file_opened(&call, {v(comm)}, {name}, {v(amode)}, "
                         f"{lang.handle('File', f'*{file}')});")
    elif kind == "io_close":
        body.pre.append(f"const MPI_File file_before = {lang.handle('File', f'*{a[0]}')};")
        body.pre.append("const uint32_t file_id = adt_mpi_file_close_begin(file_before);")
        body.post.append(f"if ({ok}) adt_mpi_file_closed(&call, file_before, file_id);")
    elif kind == "io_delete":
        name = lang.string_c(a[0], body.post)
        body.post.append(f"if ({ok}) adt_mpi_file_deleted(&call, {name});")


def world_narrowing(fn, lang):
    """Lines at the top of a wrapper, before it decides whether to record
    the call: every MPI_COMM_WORLD argument becomes the application's world
    (adt_mpi_world, comms.h), on both paths, so that an MPMD launch's
    analyzers stay out of the application's sight."""
    comms = [p for p in fn.params if p.base == "MPI_Comm" and not p.indirect]
    if fn.world == "real world" or not comms:
        return []
    lines = []
    for param in comms:
        name = param.name
        if lang.fortran:
            given, narrowed = f"*{name}", f"adt_mpi_narrowed_fortran(*{name})"
        else:
            given, narrowed = name, f"adt_mpi_narrowed({name})"
        if fn.world == "world attributes":
            keyval = next(p.name for p in fn.params if p.name.endswith("keyval"))
            narrowed = f"adt_mpi_world_attribute({lang.value(fn, keyval)}) ? {given} : {narrowed}"
        if fn.world == "both worlds":
            world = "adt_mpi_world_fortran_given" if lang.fortran else "MPI_COMM_WORLD"
            others = ", ".join("MPI_COMM_WORLD" if p is param else lang.value(fn, p.name) for p in fn.params)
            lines.append(f"if ({given} == {world} && adt_mpi_world != MPI_COMM_WORLD)")
            lines.append(f"    P{fn.name}({others});")
        if lang.fortran:
            lines.append(f"MPI_Fint {name}_narrowed = {narrowed};")
            lines.append(f"{name} = &{name}_narrowed;")
        else:
            lines.append(f"{name} = {narrowed};")
    return lines


def indent(lines, depth=1):
    return "".join("    " * depth + line + "\n" for line in lines)


def scratch_lines(body, fortran):
    if body.scratch is None:
        return [], []
    acquire = [f"adt_mpi_scratch scratch;", f"adt_mpi_scratch_init(&scratch, {body.scratch});"]
    return acquire, ["adt_mpi_scratch_release(&scratch);"]


def location_lines(fn, call_next, succeeded, returned, call_next_and_return):
    """The wrapper's first lines: its location, MPI_Init's unmeasured
    start (no location yet: passed on, then adaptrace told whether it
    succeeded), the call passed on unrecorded where adaptrace is not
    measuring or already inside a call, and the Enter. call_next is the
    statement calling the next library, succeeded the condition after it,
    returned the return statement and call_next_and_return the lines that
    pass a call on and return (one statement in C, a block in Fortran)."""
    lines = ["adt_location *location = adt_mpi_location();"]
    if fn.kind in ("init", "init_thread"):
        lines += ["if (!location) {", f"    {call_next}", f"    if ({succeeded})",
                  "        adt_mpi_init_unmeasured();", f"    {returned}", "}"]
        passed_on = "adt_mpi_reentered"
    else:
        passed_on = "!location || adt_mpi_reentered"
    return lines + [f"if ({passed_on}({fn.enum})){call_next_and_return[0]}"] + call_next_and_return[1:] + \
        [f"adt_mpi_call call = adt_mpi_enter(location, {fn.enum});"]


def c_wrapper(fn):
    lang = CLanguage()
    body = build_body(fn, lang)
    decl = ", ".join([p.c_decl() for p in fn.params] + (["..."] if fn.variadic else [])) or "void"
    args = ", ".join(p.name for p in fn.params)
    next_args = ", ".join(body.replace.get(p.name, p.name) for p in fn.params)
    acquire, release = scratch_lines(body, False)
    out = [f"ADT_MPI_NEXT_DEFINE({fn.name}, P{fn.name});\n"]
    out.append(f"int {fn.name}({decl})\n{{\n")
    out.append(indent(world_narrowing(fn, lang) + body.before_location))
    out.append(indent(location_lines(fn, f"const int unmeasured_result = ADT_MPI_NEXT({fn.name})({args});",
                                     "unmeasured_result == MPI_SUCCESS", "return unmeasured_result;",
                                     ["", f"    return ADT_MPI_NEXT({fn.name})({args});"])))
    out.append(indent(acquire + body.pre))
    out.append(indent(["adt_mpi_passing(&call);",
                       f"const int next_result = ADT_MPI_NEXT({fn.name})({next_args});"]))
    if body.leave:
        out.append(indent(["adt_mpi_returned(&call);"]))
    out.append(indent(body.post + release))
    if body.leave:
        out.append(indent([f"adt_mpi_leave(&call, {fn.enum});"]))
    out.append(indent(["return next_result;"]))
    out.append("}\n")
    return "".join(out)


class FortranBinding:
    """The mpif.h / use mpi entry points: ierror is always passed (where
    the function has one). Open MPI implements them in C, with int string
    lengths."""
    ierror = "ierr"
    length_type = "int"

    def symbols(self, fn):
        return fn.fortran_symbols()

    def ierror_lines(self):
        return []


class F08Binding(FortranBinding):
    """Open MPI's mpi_f08 entry points: the same arguments as mpif.h (a
    handle is a derived type holding one MPI_Fint, passed by reference; a
    status is the same MPI_Fint array; MPI_STATUS_IGNORE is the same
    mpi_fortran_status_ignore_ object), except that ierror is optional and
    arrives as NULL when the caller leaves it out. Open MPI implements them
    in Fortran, so a string's length is gfortran's hidden size_t."""
    ierror = "ierror"
    length_type = "size_t"

    def symbols(self, fn):
        return fn.f08_symbols()

    def ierror_lines(self):
        return ["MPI_Fint ierror_absent;",
                "MPI_Fint *ierr = ierror ? ierror : &ierror_absent;"]


def fortran_signature(fn, binding):
    params = [p.f_decl() for p in fn.fparams] + ([f"MPI_Fint *{binding.ierror}"] if fn.has_ierror else [])
    params += [f"{binding.length_type} {p.name}_length" for p in fn.fparams if p.is_string]
    return ", ".join(params)


def fortran_call_args(fn, replace):
    args = [replace.get(p.name, p.name) for p in fn.fparams] + (["ierr"] if fn.has_ierror else [])
    return ", ".join(args + [f"{p.name}_length" for p in fn.fparams if p.is_string])


def fortran_wrapper(fn, binding):
    """The aliases (mpi_send, mpi_send__, MPI_SEND) share the body of the
    first symbol (gfortran's mpi_send_) and pass on to its next definition."""
    lang = FortranLanguage()
    body = build_body(fn, lang)
    symbols = binding.symbols(fn)
    symbol = symbols[0]
    signature = fortran_signature(fn, binding)
    acquire, release = scratch_lines(body, True)
    out = [f"void p{symbol}({signature});\n"]
    out.append(f"ADT_MPI_NEXT_DEFINE({symbol}, p{symbol});\n")
    out.append(f"void {symbol}({signature})\n{{\n")
    out.append(indent((binding.ierror_lines() if fn.has_ierror else []) + world_narrowing(fn, lang) +
                      body.before_location))
    call_next = f"ADT_MPI_NEXT({symbol})({fortran_call_args(fn, {})});"
    out.append(indent(location_lines(fn, call_next, "*ierr == MPI_SUCCESS", "return;",
                                     [" {", f"    {call_next}", "    return;", "}"])))
    out.append(indent(acquire + body.pre))
    out.append(indent(["adt_mpi_passing(&call);",
                       f"ADT_MPI_NEXT({symbol})({fortran_call_args(fn, body.replace)});"]))
    if body.leave:
        out.append(indent(["adt_mpi_returned(&call);"]))
    out.append(indent(body.post + release))
    if body.leave:
        out.append(indent([f"adt_mpi_leave(&call, {fn.enum});"]))
    out.append("}\n")
    for alias in symbols[1:]:
        out.append(f"void {alias}({signature}) __attribute__((alias(\"{symbol}\")));\n")
    return "".join(out)


def next_finder(name, entries):
    """adt_mpi_next_find_<name> (next.h): entries are (symbol, its PMPI twin)."""
    lines = "".join(f"    ADT_MPI_NEXT_FIND({symbol}, {pmpi});\n" for symbol, pmpi in entries)
    return f"\nvoid adt_mpi_next_find_{name}(void)\n{{\n{lines}}}\n"


INTERPOSED = ["pthread_create", "sigaction", "signal", "dlclose",
              "sleep", "usleep", "nanosleep", "clock_nanosleep", "poll", "ppoll", "select", "pselect",
              "epoll_wait", "epoll_pwait", "epoll_pwait2", "pause", "sigsuspend", "sigtimedwait", "sigwaitinfo"]


HEADER = "/* Generated by mpi-events/generate_wrappers.py from mpi-events/mpi.api. Do not edit. */\n"


def write(path, text):
    # Rewrite only on change so that the build does not recompile needlessly.
    if os.path.exists(path):
        with open(path) as stream:
            if stream.read() == text:
                return
    with open(path, "w") as stream:
        stream.write(text)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: generate_wrappers.py API_FILE OUTPUT_DIR\n")
        return 2
    try:
        functions = parse(argv[1])
    except (OSError, ValueError) as error:
        sys.stderr.write(f"generate_wrappers.py: {argv[1]}: {error}\n")
        return 1
    out = argv[2]
    os.makedirs(out, exist_ok=True)

    enum = "".join(f"    {fn.enum},\n" for fn in functions)
    write(os.path.join(out, "mpi_functions.h"), HEADER +
          "#ifndef ADAPTRACE_MPI_FUNCTIONS_H\n#define ADAPTRACE_MPI_FUNCTIONS_H\n\n"
          "#include \"format/format.h\"\n\n"
          f"typedef enum adt_mpi_function {{\n{enum}    ADT_MPI_FN_COUNT\n}} adt_mpi_function;\n\n"
          "typedef struct adt_mpi_function_desc {\n    const char *name;\n    adt_region_role role;\n"
          "} adt_mpi_function_desc;\n\n"
          "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
          "extern const adt_mpi_function_desc adt_mpi_functions[ADT_MPI_FN_COUNT];\n\n"
          "#ifdef __cplusplus\n}\n#endif\n\n#endif\n")

    rows = "".join(f"    [{fn.enum}] = {{\"{fn.name}\", {fn.role}}},\n" for fn in functions)
    write(os.path.join(out, "mpi_functions.c"), HEADER +
          "#include \"mpi_functions.h\"\n\n"
          f"const adt_mpi_function_desc adt_mpi_functions[ADT_MPI_FN_COUNT] = {{\n{rows}}};\n")

    preamble = HEADER + "#include \"wrap_support.h\"\n\n"
    # The wrappers of the deprecated functions (MPI_Attr_put, ...) name their
    # PMPI twins (the next definition's type and fallback), which mpi.h marks
    # deprecated.
    deprecated_allowed = "#pragma GCC diagnostic ignored \"-Wdeprecated-declarations\"\n\n"
    write(os.path.join(out, "wrappers_c.c"),
          preamble + deprecated_allowed + "\n".join(c_wrapper(fn) for fn in functions) +
          next_finder("c", [(fn.name, "P" + fn.name) for fn in functions]))
    for name, binding in (("fortran", FortranBinding()), ("f08", F08Binding())):
        bound = [fn for fn in functions if binding.symbols(fn)]
        write(os.path.join(out, f"wrappers_{name}.c"),
              preamble + "\n".join(fortran_wrapper(fn, binding) for fn in bound) +
              next_finder(name, [(binding.symbols(fn)[0], "p" + binding.symbols(fn)[0]) for fn in bound]))

    symbols = []
    for fn in functions:
        symbols.append(fn.name)
        symbols.extend(fn.fortran_symbols())
        symbols.extend(fn.f08_symbols())
    # Interposed by the other modules: pthread_create (runtime: new threads
    # get a location), sigaction and signal (sampler: an application's
    # handler for the sampling signal is chained, not installed over ours),
    # dlclose (sampler: its unmapping must not meet a sample reading the
    # unwind tables of the objects it unmaps), the sleeping calls (sampler:
    # a timer's signal must not cut them short).
    # The user API (user/adaptrace.h): libadaptrace.so defines it in place
    # of libadaptrace_user's no-ops.
    exported = "".join(f"    {s};\n" for s in symbols + INTERPOSED + ["adaptrace_*"])
    write(os.path.join(out, "adaptrace.map"), f"{{\n  global:\n{exported}  local:\n    *;\n}};\n")
    write(os.path.join(out, "wrapped.txt"), "".join(f"{s}\n" for s in symbols))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
