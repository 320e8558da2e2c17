#!/usr/bin/python3
"""Checks that the skeleton of a run (ARCHIVE/skeleton.adts, issue #25)
holds, per rank and thread, exactly the MPI calls and parameters of the
OTF2 events of the same run, call by call, with python3-otf2 (Debian's
/usr/bin/python3):

- `adaptrace-report --skeleton --expand ARCHIVE` prints every call of
  the skeleton in order, one line each;
- this script builds the same lines from the OTF2 events independently:
  each outermost MPI region (Enter/CallingContextEnter to its Leave) is a
  call, the message, collective, request, RMA and I/O events inside it
  its records (RMA and I/O ones in the fields their OTF2 events hold:
  the skeleton's lines are reduced to those), a nested MPI region its
  enter/leave; windows, I/O handles, files and groups numbered like
  communicators, matching ids like requests; peers relative to the own
  rank in the communicator (from the communicator's group), communicators
  by first use on the location, requests as the lowest symbolic id free
  when first seen, freed after the call that completes them (as
  docs/folding.md says the skeleton encodes them);
- the calling context: the skeleton numbers the process's own (finer)
  calling contexts, the archive the unified ones, so the check is that
  each skeleton context stands for one archive context throughout;
- a receive's peer and tag in the skeleton are those it asked for:
  `peer=any` (MPI_ANY_SOURCE) or `tag=any` (MPI_ANY_TAG) in a recv or
  irecv record stands for whatever peer or tag its OTF2 event holds (the
  one that matched); anywhere else, or any other field, must be equal.

With --perturb N, the N-th call that has records gets its first number
changed by one in the skeleton's lines before the comparison, and the
check must then fail (exit 1): a comparison that sees one parameter.

A thread whose skeleton stopped early (its header says why) must hold
exactly the calls before that point, and fewer than the archive.

With --otf2-print, the events are read from the text of otf2-print (and
otf2-print -G for the communicators) instead: python3-otf2 cannot read
the definitions of an archive with an inter-communicator (KeyError:
CommFlag.NONE); runs with sampling off only (Enter/Leave).

usage: skeleton_check.py REPORT_COMMAND ARCHIVE [--perturb N] [--otf2-print]
Exit status 0 when they agree, 1 with the first difference of each rank.
"""
import re
import subprocess
import sys

import otf2

UNDEFINED_UINT32 = (1 << 32) - 1

OBJECT_LETTERS = {"comm": "c", "win": "w", "handle": "h", "file": "h", "group": "g"}

# The fields of each RMA and I/O record that its OTF2 event holds (the
# skeleton encodes every field of the record, docs/folding.md; the writer,
# format/writer_events.c, keeps these), in the skeleton's order.
RMA_ORDER = ["sent", "received", "matching", "win", "target", "group", "detail", "sync"]
IO_ORDER = ["bytes", "matching", "offset", "handle", "mode", "flags", "status"]
KEPT_FIELDS = {
    "rma_win_create": {"win"}, "rma_win_destroy": {"win"}, "rma_collective_begin": set(),
    "rma_collective_end": {"detail", "sync", "win", "sent", "received"},
    "rma_group_sync": {"sync", "win", "group"},
    "rma_request_lock": {"win", "target", "matching", "detail"},
    "rma_release_lock": {"win", "target", "matching"},
    "rma_sync": {"win", "target", "detail"},
    "rma_put": {"win", "target", "sent", "matching"},
    "rma_get": {"win", "target", "received", "matching"},
    "rma_atomic": {"win", "target", "detail", "sent", "received", "matching"},
    "rma_op_complete_blocking": {"win", "matching"}, "rma_op_complete_nonblocking": {"win", "matching"},
    "rma_op_complete_remote": {"win", "matching"}, "rma_op_test": {"win", "matching"},
    "io_create_handle": {"handle", "mode", "flags", "status"}, "io_destroy_handle": {"handle"},
    "io_delete_file": {"handle"},
    "io_operation_begin": {"handle", "mode", "flags", "bytes", "matching"},
    "io_operation_issued": {"handle", "matching"}, "io_operation_test": {"handle", "matching"},
    "io_operation_complete": {"handle", "bytes", "matching"}, "io_operation_cancelled": {"handle", "matching"},
    "io_seek": {"handle", "offset", "mode", "bytes"},
}
# The records that end a matching id (fold.c's put_request).
COMPLETING_KINDS = {"rma_op_complete_blocking", "rma_op_complete_nonblocking", "rma_op_complete_remote",
                    "io_operation_complete", "io_operation_cancelled"}
# python3-otf2's event class: (the skeleton's kind, {our field: its attribute}).
OTF2_RMA_IO_EVENTS = {
    "RmaWinCreate": ("rma_win_create", {"win": "win"}),
    "RmaWinDestroy": ("rma_win_destroy", {"win": "win"}),
    "RmaCollectiveBegin": ("rma_collective_begin", {}),
    "RmaCollectiveEnd": ("rma_collective_end", {"detail": "collective_op", "sync": "sync_level", "win": "win",
                                                "sent": "bytes_sent", "received": "bytes_received"}),
    "RmaGroupSync": ("rma_group_sync", {"sync": "sync_level", "win": "win", "group": "group"}),
    "RmaRequestLock": ("rma_request_lock", {"win": "win", "target": "remote", "matching": "lock_id",
                                            "detail": "lock_type"}),
    "RmaReleaseLock": ("rma_release_lock", {"win": "win", "target": "remote", "matching": "lock_id"}),
    "RmaSync": ("rma_sync", {"win": "win", "target": "remote", "detail": "sync_type"}),
    "RmaPut": ("rma_put", {"win": "win", "target": "remote", "sent": "bytes", "matching": "matching_id"}),
    "RmaGet": ("rma_get", {"win": "win", "target": "remote", "received": "bytes", "matching": "matching_id"}),
    "RmaAtomic": ("rma_atomic", {"win": "win", "target": "remote", "detail": "type", "sent": "bytes_sent",
                                 "received": "bytes_received", "matching": "matching_id"}),
    "RmaOpCompleteBlocking": ("rma_op_complete_blocking", {"win": "win", "matching": "matching_id"}),
    "RmaOpCompleteNonBlocking": ("rma_op_complete_nonblocking", {"win": "win", "matching": "matching_id"}),
    "RmaOpCompleteRemote": ("rma_op_complete_remote", {"win": "win", "matching": "matching_id"}),
    "RmaOpTest": ("rma_op_test", {"win": "win", "matching": "matching_id"}),
    "IoCreateHandle": ("io_create_handle", {"handle": "handle", "mode": "mode", "flags": "creation_flags",
                                            "status": "status_flags"}),
    "IoDestroyHandle": ("io_destroy_handle", {"handle": "handle"}),
    "IoDeleteFile": ("io_delete_file", {"handle": "file"}),
    "IoOperationBegin": ("io_operation_begin", {"handle": "handle", "mode": "mode", "flags": "operation_flags",
                                                "bytes": "bytes_request", "matching": "matching_id"}),
    "IoOperationIssued": ("io_operation_issued", {"handle": "handle", "matching": "matching_id"}),
    "IoOperationTest": ("io_operation_test", {"handle": "handle", "matching": "matching_id"}),
    "IoOperationComplete": ("io_operation_complete", {"handle": "handle", "bytes": "bytes_result",
                                                      "matching": "matching_id"}),
    "IoOperationCancelled": ("io_operation_cancelled", {"handle": "handle", "matching": "matching_id"}),
    "IoSeek": ("io_seek", {"handle": "handle", "offset": "offset_request", "mode": "whence",
                           "bytes": "offset_result"}),
}


def enum_int(value):
    """An event attribute as the number the record held: a definition by
    its reference (an object, mapped by first use later), an enum or a
    bit set by its value."""
    if hasattr(value, "_ref"):
        return value._ref
    if hasattr(value, "value"):
        return int(value.value)
    return int(value)


def rma_io_line(kind, fields):
    order = RMA_ORDER if kind.startswith("rma_") else IO_ORDER
    return " ".join([kind] + [f"{name}={fields[name]}" for name in order if name in KEPT_FIELDS[kind]])


def project_rma_io(line):
    """A skeleton call's line with each RMA and I/O record reduced to the
    fields its OTF2 event holds."""
    parts = line.split(" | ")
    for i, part in enumerate(parts[1:], 1):
        kind, *fields = part.split(" ")
        if kind in KEPT_FIELDS:
            parts[i] = rma_io_line(kind, dict(f.split("=", 1) for f in fields))
    return " | ".join(parts)


def signed(value):
    return f"{value:+d}"


class Location:
    """One location's calls rebuilt from its events."""

    def __init__(self, own_rank_of):
        self.own_rank_of = own_rank_of
        self.calls = []
        self.contexts = []
        self.depth = 0
        self.current = None
        self.objects = {}
        self.requests = {}
        self.symbols_in_use = set()
        self.completed = []
        # The first outermost call's Leave and the last one's Enter, as the
        # python3-otf2 walk finds them (skeleton_span_check.py: the span the
        # skeleton's timing covers).
        self.first_leave = None
        self.last_enter = None

    def obj(self, kind, ref):
        """An object by its order of first use on the location, per kind,
        with the letter of the skeleton's field name."""
        key = (kind, ref)
        if key not in self.objects:
            self.objects[key] = sum(1 for k in self.objects if k[0] == kind)
        return f"{OBJECT_LETTERS[kind]}{self.objects[key]}"

    def comm(self, communicator):
        return self.obj("comm", communicator._ref)

    def rma_io(self, kind, values):
        """An RMA or I/O record's line: the fields its OTF2 event holds
        (KEPT_FIELDS), objects and matching ids encoded as for the others."""
        fields = dict(values)
        for name, object_kind in (("win", "win"), ("handle", "file" if kind == "io_delete_file" else "handle"),
                                  ("group", "group")):
            if name in fields:
                fields[name] = self.obj(object_kind, fields[name])
        if "matching" in fields:
            fields["matching"] = self.request(fields["matching"], kind in COMPLETING_KINDS)
        if "offset" in fields:
            fields["offset"] = signed(fields["offset"])
        return rma_io_line(kind, fields)

    def request(self, raw, completes):
        if raw == 0:
            return "-"
        if raw not in self.requests:
            symbol = 0
            while symbol in self.symbols_in_use:
                symbol += 1
            self.symbols_in_use.add(symbol)
            self.requests[raw] = symbol
        if completes:
            self.completed.append(raw)
        return f"r{self.requests[raw]}"

    def end_call(self):
        for raw in self.completed:
            if raw in self.requests:
                self.symbols_in_use.discard(self.requests.pop(raw))
        self.completed = []
        self.calls.append(" | ".join(self.current))
        self.current = None

    def p2p(self, name, event, peer, request, completes):
        own = self.own_rank_of(event.communicator)
        return (f"{name} bytes={event.msg_length} request={self.request(request, completes)} "
                f"comm={self.comm(event.communicator)} peer={signed(peer - own)} tag={signed(event.msg_tag)}")

    def collective(self, name, event, request, completes):
        root = event.root if event.root is not None else UNDEFINED_UINT32
        return (f"{name} sent={event.size_sent} received={event.size_received} "
                f"request={self.request(request, completes)} op={int(event.collective_op.value)} "
                f"comm={self.comm(event.communicator)} root={root}")

    def record(self, event):
        E = otf2.events
        if isinstance(event, E.MpiSend):
            return self.p2p("send", event, event.receiver, 0, False)
        if isinstance(event, E.MpiIsend):
            return self.p2p("isend", event, event.receiver, event.request_id, False)
        if isinstance(event, E.MpiRecv):
            return self.p2p("recv", event, event.sender, 0, False)
        if isinstance(event, E.MpiIrecv):
            return self.p2p("irecv", event, event.sender, event.request_id, True)
        if isinstance(event, E.MpiIsendComplete):
            return f"isend_complete request={self.request(event.request_id, True)}"
        if isinstance(event, E.MpiIrecvRequest):
            return f"irecv_request request={self.request(event.request_id, False)}"
        if isinstance(event, E.MpiRequestTest):
            return f"request_test request={self.request(event.request_id, False)}"
        if isinstance(event, E.MpiRequestCancelled):
            return f"request_cancelled request={self.request(event.request_id, True)}"
        if isinstance(event, E.NonBlockingCollectiveRequest):
            return f"nb_collective_request request={self.request(event.request_id, False)}"
        if isinstance(event, E.MpiCollectiveBegin):
            return "collective_begin"
        if isinstance(event, E.MpiCollectiveEnd):
            return self.collective("collective_end", event, 0, False)
        if isinstance(event, E.NonBlockingCollectiveComplete):
            return self.collective("nb_collective_complete", event, event.request_id, True)
        name = type(event).__name__
        if name in OTF2_RMA_IO_EVENTS:
            kind, fields = OTF2_RMA_IO_EVENTS[name]
            return self.rma_io(kind, {ours: enum_int(getattr(event, theirs)) for ours, theirs in fields.items()})
        raise ValueError(f"event {type(event).__name__} inside an MPI call: this check does not know it")

    def event(self, event):
        E = otf2.events
        if isinstance(event, (E.Enter, E.CallingContextEnter)):
            region = event.region if isinstance(event, E.Enter) else event.calling_context.region
            if region.paradigm != otf2.Paradigm.MPI:
                return
            if self.depth == 0:
                self.current = [region.name]
                self.last_enter = event.time
                self.contexts.append(event.calling_context._ref if isinstance(event, E.CallingContextEnter)
                                     else None)
            else:
                self.current.append(f"enter function={region.name}")
            self.depth += 1
        elif isinstance(event, (E.Leave, E.CallingContextLeave)):
            region = event.region if isinstance(event, E.Leave) else event.calling_context.region
            if region.paradigm != otf2.Paradigm.MPI:
                return
            self.depth -= 1
            if self.depth == 0:
                self.end_call()
                if self.first_leave is None:
                    self.first_leave = event.time
            else:
                self.current.append(f"leave function={region.name}")
        elif isinstance(event, (E.CallingContextSample, E.Metric, E.MeasurementOnOff, E.BufferFlush)):
            return
        elif self.depth > 0:
            self.current.append(self.record(event))


def printed_record(loc, name, rest, comm):
    def p2p(kind, peer_name, request, completes):
        own = loc.own_rank_of(comm)
        return (f"{kind} bytes={field(rest, 'Length')} request={loc.request(request, completes)} "
                f"comm={loc.comm(comm)} peer={signed(int(field(rest, peer_name)) - own)} "
                f"tag={signed(int(field(rest, 'Tag')))}")

    def collective(kind, request, completes):
        root = field(rest, "Root", r"(\w+)")
        root = ROOTS[root] if root in ROOTS else int(root)
        op = int(getattr(otf2.CollectiveOp, field(rest, "Operation", r"(\w+)")).value)
        return (f"{kind} sent={field(rest, 'Sent')} received={field(rest, 'Received')} "
                f"request={loc.request(request, completes)} op={op} comm={loc.comm(comm)} root={root}")

    request = int(field(rest, "Request")) if "Request: " in rest else 0
    simple = {"MPI_ISEND_COMPLETE": ("isend_complete", True), "MPI_IRECV_REQUEST": ("irecv_request", False),
              "MPI_REQUEST_TEST": ("request_test", False), "MPI_REQUEST_CANCELLED": ("request_cancelled", True),
              "NON_BLOCKING_COLLECTIVE_REQUEST": ("nb_collective_request", False)}
    if name == "MPI_SEND":
        return p2p("send", "Receiver", 0, False)
    if name == "MPI_ISEND":
        return p2p("isend", "Receiver", request, False)
    if name == "MPI_RECV":
        return p2p("recv", "Sender", 0, False)
    if name == "MPI_IRECV":
        return p2p("irecv", "Sender", request, True)
    if name in simple:
        kind, completes = simple[name]
        return f"{kind} request={loc.request(request, completes)}"
    if name == "MPI_COLLECTIVE_BEGIN":
        return "collective_begin"
    if name == "MPI_COLLECTIVE_END":
        return collective("collective_end", 0, False)
    if name == "NON_BLOCKING_COLLECTIVE_COMPLETE":
        return collective("nb_collective_complete", request, True)
    if name in PRINTED_RMA_IO_EVENTS:
        kind, fields = PRINTED_RMA_IO_EVENTS[name]
        return loc.rma_io(kind, {ours: printed_value(rest, label, enum)
                                 for ours, (label, enum) in fields.items()})
    raise ValueError(f"event {name} inside an MPI call: this check does not know it")


def printed_event(self, name, rest, comms):
    if name in ("ENTER", "LEAVE"):
        region = field(rest, "Region", r'"([^"]*)"')
        if not region.startswith("MPI_"):
            return
        if name == "ENTER":
            if self.depth == 0:
                self.current = [region]
                self.contexts.append(None)
            else:
                self.current.append(f"enter function={region}")
            self.depth += 1
        else:
            self.depth -= 1
            if self.depth == 0:
                self.end_call()
            else:
                self.current.append(f"leave function={region}")
    elif name.startswith("CALLING_CONTEXT"):
        raise ValueError("--otf2-print reads runs with sampling off only")
    elif self.depth > 0:
        comm = None
        if "Communicator: " in rest:
            ref = int(field(rest, "Communicator", QUOTED + r" <(\d+)>"))
            comm = PrintedComm(ref, comms[ref])
        self.current.append(printed_record(self, name, rest, comm))


Location.printed_event = printed_event


def archive_calls(archive):
    """{(rank, thread): Location} from the OTF2 events."""
    locations = {}
    with otf2.reader.open(f"{archive}/traces.otf2") as trace:
        for location, event in trace.events:
            key = (location._ref & 0xFFFFFFFF, location._ref >> 32)
            if key not in locations:
                group = location.group._ref

                def own_rank_of(comm, group=group):
                    members = comm.group.members
                    if comm.group.group_type == otf2.GroupType.COMM_SELF or not members:
                        return 0
                    return [member.group._ref for member in members].index(group)

                locations[key] = Location(own_rank_of)
            locations[key].event(event)
    return locations


ROOTS = {"NONE": UNDEFINED_UINT32, "SELF": UNDEFINED_UINT32 - 1, "THIS_GROUP": UNDEFINED_UINT32 - 2}
EVENT_LINE = re.compile(r"^(\w+)\s+(\d+)\s+(\d+)\s+(.*)$")
QUOTED = r'"(?:[^"\\]|\\.)*"'


def field(text, name, pattern=r"(-?\d+)"):
    match = re.search(rf"\b{name}: {pattern}", text)
    if not match:
        raise ValueError(f"no {name} in: {text}")
    return match.group(1)


def printed_comms(archive):
    """{comm ref: [member location refs] per group it has, None for
    COMM_SELF} from otf2-print -G."""
    text = subprocess.run(["otf2-print", "-G", f"{archive}/traces.otf2"], capture_output=True, text=True,
                          check=True).stdout
    groups, comms = {}, {}
    for line in text.splitlines():
        head = re.match(r"^(GROUP|COMM|INTER_COMM)\s+(\d+)\s+(.*)$", line)
        if not head:
            continue
        kind, ref, rest = head.group(1), int(head.group(2)), head.group(3)
        if kind == "GROUP":
            members = None if "Type: COMM_SELF" in rest else [int(m) for m in re.findall(r"<(\d+)>\)", rest)]
            groups[ref] = members
        elif kind == "COMM":
            comms[ref] = [int(field(rest, "Group", QUOTED + r" <(\d+)>"))]
        else:
            comms[ref] = [int(field(rest, "Group A", QUOTED + r" <(\d+)>")),
                          int(field(rest, "Group B", QUOTED + r" <(\d+)>"))]
    return {ref: [groups[g] for g in group_refs] for ref, group_refs in comms.items()}


# otf2-print's event names: (the skeleton's kind, {our field: (its label,
# the enum its text names, or None for a number or a definition)}).
# IO_OPERATION_TEST, IO_OPERATION_CANCELLED and RMA_OP_TEST appear in no
# test's archive: their labels are those of their siblings.
_WIN = ("Window", None)
_REMOTE = ("Remote", None)
_HANDLE = ("Handle", None)
_IO_MATCHING = ("Matching Id", None)
PRINTED_RMA_IO_EVENTS = {
    "RMA_WIN_CREATE": ("rma_win_create", {"win": _WIN}),
    "RMA_WIN_DESTROY": ("rma_win_destroy", {"win": _WIN}),
    "RMA_COLLECTIVE_BEGIN": ("rma_collective_begin", {}),
    "RMA_COLLECTIVE_END": ("rma_collective_end", {"detail": ("Operation", otf2.CollectiveOp), "win": _WIN,
                                                  "sync": ("Level of Synchronicity", otf2.RmaSyncLevel),
                                                  "sent": ("Sent", None), "received": ("Received", None)}),
    "RMA_GROUP_SYNC": ("rma_group_sync", {"sync": ("Level of Synchronicity", otf2.RmaSyncLevel), "win": _WIN,
                                          "group": ("Group", None)}),
    "RMA_REQUEST_LOCK": ("rma_request_lock", {"win": _WIN, "target": _REMOTE, "matching": ("Lock", None),
                                              "detail": ("Type", otf2.LockType)}),
    "RMA_RELEASE_LOCK": ("rma_release_lock", {"win": _WIN, "target": _REMOTE, "matching": ("Lock", None)}),
    "RMA_SYNC": ("rma_sync", {"win": _WIN, "target": _REMOTE, "detail": ("Sync Type", otf2.RmaSyncType)}),
    "RMA_PUT": ("rma_put", {"win": _WIN, "target": _REMOTE, "sent": ("Bytes", None), "matching": ("Matching", None)}),
    "RMA_GET": ("rma_get", {"win": _WIN, "target": _REMOTE, "received": ("Bytes", None),
                            "matching": ("Matching", None)}),
    "RMA_ATOMIC": ("rma_atomic", {"win": _WIN, "target": _REMOTE, "detail": ("Type", otf2.RmaAtomicType),
                                  "sent": ("Sent", None), "received": ("Received", None),
                                  "matching": ("Matching", None)}),
    "RMA_OP_COMPLETE_BLOCKING": ("rma_op_complete_blocking", {"win": _WIN, "matching": ("Matching", None)}),
    "RMA_OP_COMPLETE_NON_BLOCKING": ("rma_op_complete_nonblocking", {"win": _WIN, "matching": ("Matching", None)}),
    "RMA_OP_COMPLETE_REMOTE": ("rma_op_complete_remote", {"win": _WIN, "matching": ("Matching", None)}),
    "RMA_OP_TEST": ("rma_op_test", {"win": _WIN, "matching": ("Matching", None)}),
    "IO_CREATE_HANDLE": ("io_create_handle", {"handle": _HANDLE, "mode": ("Access Mode", otf2.IoAccessMode),
                                              "flags": ("Creation Flags", otf2.IoCreationFlag),
                                              "status": ("Status Flags", otf2.IoStatusFlag)}),
    "IO_DESTROY_HANDLE": ("io_destroy_handle", {"handle": _HANDLE}),
    "IO_DELETE_FILE": ("io_delete_file", {"handle": ("File", None)}),
    "IO_OPERATION_BEGIN": ("io_operation_begin", {"handle": _HANDLE, "mode": ("Mode", otf2.IoOperationMode),
                                                  "flags": ("Operation Flags", otf2.IoOperationFlag),
                                                  "bytes": ("Bytes Request", None), "matching": _IO_MATCHING}),
    "IO_OPERATION_ISSUED": ("io_operation_issued", {"handle": _HANDLE, "matching": _IO_MATCHING}),
    "IO_OPERATION_TEST": ("io_operation_test", {"handle": _HANDLE, "matching": _IO_MATCHING}),
    "IO_OPERATION_COMPLETE": ("io_operation_complete", {"handle": _HANDLE, "bytes": ("Bytes Result", None),
                                                        "matching": _IO_MATCHING}),
    "IO_OPERATION_CANCELLED": ("io_operation_cancelled", {"handle": _HANDLE, "matching": _IO_MATCHING}),
    "IO_SEEK": ("io_seek", {"handle": _HANDLE, "offset": ("Offset Request", None),
                            "mode": ("Whence", otf2.IoSeekOption), "bytes": ("Offset Result", None)}),
}


def printed_value(text, label, enum):
    """A field of otf2-print's text as a number: a definition by its
    reference (<n>), a rank by its number (UNDEFINED: every rank, as
    MPI_Win_lock_all's), an enum or a bit set ({A, B},
    NONE) by its value."""
    match = re.search(rf"(?:^|, ){label}: ({QUOTED} <\d+>|\{{[^}}]*\}}|[\w-]+)", text)
    if not match:
        raise ValueError(f"no {label} in: {text}")
    value = match.group(1)
    if value.startswith('"'):
        return int(re.search(r"<(\d+)>$", value).group(1))
    if enum is None:
        return UNDEFINED_UINT32 if value == "UNDEFINED" else int(value)
    names = value.strip("{}").split(", ") if value.startswith("{") else [value]
    return sum(0 if name == "NONE" else int(getattr(enum, name).value) for name in names)


class PrintedComm:
    """What Location asks of a communicator, from otf2-print's text."""

    def __init__(self, ref, groups):
        self._ref = ref
        self.groups = groups


def printed_calls(archive):
    """{(rank, thread): Location} from the text of otf2-print."""
    comms = printed_comms(archive)
    text = subprocess.run(["otf2-print", f"{archive}/traces.otf2"], capture_output=True, text=True,
                          check=True).stdout
    locations = {}
    for line in text.splitlines():
        match = EVENT_LINE.match(line)
        if not match or match.group(1) == "Event":
            continue
        name, location, rest = match.group(1), int(match.group(2)), match.group(4)
        key = (location & 0xFFFFFFFF, location >> 32)
        if key not in locations:
            def own_rank_of(comm, rank=key[0]):
                for members in comm.groups:
                    if members is None:
                        return 0
                    ranks = [m & 0xFFFFFFFF for m in members]
                    if rank in ranks:
                        return ranks.index(rank)
                raise ValueError(f"rank {rank} is in no group of communicator {comm._ref}")
            locations[key] = Location(own_rank_of)
        locations[key].printed_event(name, rest, comms)
    return locations


CONTEXT = re.compile(r"^(\S+)(?: ctx=(\d+))?(.*)$")


def skeleton_calls(report, archive):
    """{(rank, thread): [(line without ctx, ctx)]} from the expanded skeleton."""
    out = subprocess.run([report, "--skeleton", "--expand", archive], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"skeleton_check: {report} --skeleton --expand failed: {out.stderr.strip()}")
    calls, stopped = {}, {}
    current = None
    for line in out.stdout.splitlines():
        head = re.match(r"^rank (\d+) thread (\d+)(?: stopped: (\w+))?$", line)
        if head:
            key = (int(head.group(1)), int(head.group(2)))
            current = calls.setdefault(key, [])
            if head.group(3):
                stopped[key] = head.group(3)
            continue
        match = CONTEXT.match(line)
        current.append((project_rma_io(match.group(1) + match.group(3)), match.group(2)))
    return calls, stopped


WILDCARD_FIELDS = ("peer=any", "tag=any")


def same_call(ours, theirs):
    """Whether a skeleton line stands for an archive line: equal, but
    that a receive's wildcard peer or tag matches any value there."""
    if ours == theirs:
        return True
    our_records, their_records = ours.split(" | "), theirs.split(" | ")
    if len(our_records) != len(their_records):
        return False
    for our_record, their_record in zip(our_records, their_records):
        our_fields, their_fields = our_record.split(" "), their_record.split(" ")
        if len(our_fields) != len(their_fields):
            return False
        receive = our_fields[0] in ("recv", "irecv")
        for mine, other in zip(our_fields, their_fields):
            wildcard = receive and mine in WILDCARD_FIELDS and other.startswith(mine[:-len("any")])
            if mine != other and not wildcard:
                return False
    return True


def perturb(calls, n):
    """Changes the first number in the n-th call that has records."""
    seen = 0
    for key in sorted(calls):
        for i, (line, context) in enumerate(calls[key]):
            if " | " not in line:
                continue
            if seen == n:
                head, records = line.split(" | ", 1)
                changed = re.sub(r"=([a-z+-]?)(\d+)", lambda m: f"={m.group(1)}{int(m.group(2)) + 1}", records, count=1)
                calls[key][i] = (f"{head} | {changed}", context)
                return f"rank {key[0]} call {i}: {line} -> {calls[key][i][0]}"
            seen += 1
    sys.exit(f"skeleton_check: no call number {n} with records to perturb")


def main(argv):
    args = argv[3:]
    use_otf2_print = "--otf2-print" in args
    args = [a for a in args if a != "--otf2-print"]
    if len(argv) < 3 or args not in ([],) and (len(args) != 2 or args[0] != "--perturb"):
        sys.exit(__doc__)
    report, archive = argv[1], argv[2]
    skeleton, stopped = skeleton_calls(report, archive)
    if args:
        print("perturbed:", perturb(skeleton, int(args[1])))
    archived = printed_calls(archive) if use_otf2_print else archive_calls(archive)
    failed = False
    if sorted(skeleton) != sorted(archived):
        print(f"locations differ: skeleton {sorted(skeleton)}, archive {sorted(archived)}")
        failed = True
    total = 0
    for key in sorted(set(skeleton) & set(archived)):
        ours, theirs = skeleton[key], archived[key]
        lines = [line for line, _ in ours]
        total += len(lines)
        archived_calls = theirs.calls
        if key in stopped:
            # A skeleton that stopped holds the calls before it exactly.
            print(f"rank {key[0]} thread {key[1]}: skeleton stopped ({stopped[key]}) after {len(lines)} of "
                  f"{len(theirs.calls)} calls")
            if len(lines) >= len(theirs.calls):
                print(f"rank {key[0]} thread {key[1]}: stopped, yet it holds every call")
                failed = True
            archived_calls = theirs.calls[:len(lines)]
        if len(lines) != len(archived_calls) or not all(map(same_call, lines, archived_calls)):
            at = next((i for i, (a, b) in enumerate(zip(lines, archived_calls)) if not same_call(a, b)),
                      min(len(lines), len(archived_calls)))
            print(f"rank {key[0]} thread {key[1]}: call {at} differs ({len(lines)} calls in the skeleton, "
                  f"{len(archived_calls)} in the archive)\n  skeleton: {lines[at] if at < len(lines) else '(none)'}\n"
                  f"  archive:  {archived_calls[at] if at < len(archived_calls) else '(none)'}")
            failed = True
            continue
        stands_for = {}
        for (_, context), archived_context in zip(ours, theirs.contexts):
            if stands_for.setdefault(context, archived_context) != archived_context:
                print(f"rank {key[0]} thread {key[1]}: skeleton context {context} is archive contexts "
                      f"{stands_for[context]} and {archived_context}")
                failed = True
                break
    if failed:
        return 1
    print(f"skeleton_check: {total} calls on {len(skeleton)} locations agree with the archive")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
