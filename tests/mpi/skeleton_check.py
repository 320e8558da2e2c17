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

usage: skeleton_check.py REPORT_COMMAND ARCHIVE [--perturb N]
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


CONTEXT = re.compile(r"^(\S+)(?: ctx=(\d+))?(.*)$")


def skeleton_calls(report, archive):
    """{(rank, thread): [(line without ctx, ctx)]} from the expanded skeleton."""
    out = subprocess.run([report, "--skeleton", "--expand", archive], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"skeleton_check: {report} --skeleton --expand failed: {out.stderr.strip()}")
    calls = {}
    current = None
    for line in out.stdout.splitlines():
        head = re.match(r"^rank (\d+) thread (\d+)$", line)
        if head:
            current = calls.setdefault((int(head.group(1)), int(head.group(2))), [])
            continue
        match = CONTEXT.match(line)
        current.append((match.group(1) + match.group(3), match.group(2)))
    return calls


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
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--perturb"):
        sys.exit(__doc__)
    report, archive = argv[1], argv[2]
    skeleton = skeleton_calls(report, archive)
    if len(argv) == 5:
        print("perturbed:", perturb(skeleton, int(argv[4])))
    archived = archive_calls(archive)
    failed = False
    if sorted(skeleton) != sorted(archived):
        print(f"locations differ: skeleton {sorted(skeleton)}, archive {sorted(archived)}")
        failed = True
    total = 0
    for key in sorted(set(skeleton) & set(archived)):
        ours, theirs = skeleton[key], archived[key]
        lines = [line for line, _ in ours]
        total += len(lines)
        if lines != theirs.calls:
            at = next((i for i, (a, b) in enumerate(zip(lines, theirs.calls)) if a != b), min(len(lines), len(theirs.calls)))
            print(f"rank {key[0]} thread {key[1]}: call {at} differs ({len(lines)} calls in the skeleton, "
                  f"{len(theirs.calls)} in the archive)\n  skeleton: {lines[at] if at < len(lines) else '(none)'}\n"
                  f"  archive:  {theirs.calls[at] if at < len(theirs.calls) else '(none)'}")
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
