#!/usr/bin/python3
"""Checks that the skeleton of a run (ARCHIVE/skeleton.adts, issue #25)
holds, per rank and thread, exactly the MPI calls and parameters of the
OTF2 events of the same run, call by call, with python3-otf2 (Debian's
/usr/bin/python3):

- `adaptrace-report --skeleton --expand ARCHIVE` prints every call of
  the skeleton in order, one line each;
- this script builds the same lines from the OTF2 events independently:
  each outermost MPI region (Enter/CallingContextEnter to its Leave) is a
  call, the message, collective and request events inside it its
  records, a nested MPI region its enter/leave; peers relative to the own
  rank in the communicator (from the communicator's group), communicators
  by first use on the location, requests as the lowest symbolic id free
  when first seen, freed after the call that completes them (as
  docs/folding.md says the skeleton encodes them);
- the calling context: the skeleton numbers the process's own (finer)
  calling contexts, the archive the unified ones, so the check is that
  each skeleton context stands for one archive context throughout.

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

    def comm(self, communicator):
        key = ("comm", communicator._ref)
        if key not in self.objects:
            self.objects[key] = sum(1 for k in self.objects if k[0] == "comm")
        return f"c{self.objects[key]}"

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
        raise ValueError(f"event {type(event).__name__} inside an MPI call: this check does not know it")

    def event(self, event):
        E = otf2.events
        if isinstance(event, (E.Enter, E.CallingContextEnter)):
            region = event.region if isinstance(event, E.Enter) else event.calling_context.region
            if region.paradigm != otf2.Paradigm.MPI:
                return
            if self.depth == 0:
                self.current = [region.name]
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
        current.append((match.group(1) + match.group(3), match.group(2)))
    return calls, stopped


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
        if lines != archived_calls:
            at = next((i for i, (a, b) in enumerate(zip(lines, archived_calls)) if a != b),
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
