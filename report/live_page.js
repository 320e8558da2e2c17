// Draws live/report.html, the analyzers' live report (docs/online.md),
// from the live/report.json embedded in #live-data, with the embedded d3
// and page_common.js (adaptracePage: the report page's tables, formats,
// MPI and sampled function columns and section marker). While the report
// is not final the page reloads itself every interval, as the analyzer
// writes a new one, unless the job was ended before its ranks finished
// (ended_by: no report follows that one).
"use strict";
(function () {
  const live = JSON.parse(document.getElementById("live-data").textContent);
  const {seconds, bytes, table} = adaptracePage;
  const count = d3.format(",");
  const causes = (losses) => Object.entries(losses).map(([cause, lost]) => `${cause} ${count(lost)}`).join(", ");
  const listed = (ranks) => (ranks.length === live.ranks ? `all ${live.ranks}` : `${ranks.length} of ${live.ranks}` +
                                                                                  (ranks.length ? `: ${ranks.join(", ")}` : ""));

  function drawState() {
    d3.select("#state").text(live.final
      ? `Final: every rank sent its last chunk (${seconds(live.elapsed_s)} s after the analyzers started).`
      : live.ended_by
      ? `Ended: the job was ended (${live.ended_by}) ${seconds(live.elapsed_s)} s after the analyzers started, ` +
        `before ${live.ranks - live.finished_ranks.length} of ${live.ranks} ranks sent their last chunk; ` +
        `this is what reached analyzer 0` + (live.analyzers > 1 ? ` (1 of ${live.analyzers} analyzers).` : ".")
      : `Running: written ${seconds(live.elapsed_s)} s after the analyzers started, at ${live.written_at}; ` +
        `the page reloads every ${live.interval_s} s.`);
    // Another analyzer lost (analyzers_lost_at_s): analyzer 0 goes on
    // alone, its report leaves the lost analyzers' ranks out.
    if (live.analyzers_lost_at_s !== null)
      d3.select("#state").append("span").attr("id", "analyzers-lost").text(
        ` Analyzer lost ${seconds(live.analyzers_lost_at_s)} s after the analyzers started: ` +
        `rank${live.ranks_without_analyzer.length === 1 ? "" : "s"} ${live.ranks_without_analyzer.join(", ")} ` +
        `went on without it; their calls from then on are in the archive, not in this report.`);
    table("#connection", [
      {title: "", value: ([label]) => label},
      {title: "", value: ([, value]) => value},
    ], [
      ["analyzers", live.analyzers],
      ["ranks connected", listed(live.connected_ranks)],
      ["ranks finished", listed(live.finished_ranks)],
      ["ranks without analyzer", live.analyzers_lost_at_s === null ? "none"
        : `${listed(live.ranks_without_analyzer)} (lost ${seconds(live.analyzers_lost_at_s)} s after the ` +
          `analyzers started)`],
      ["chunks received", count(live.chunks_received)],
      ["bytes received", `${bytes(live.bytes_received)}B`],
      ["calls not streamed", causes(live.calls_not_streamed_by_cause)],
      ["samples not streamed", causes(live.samples_not_streamed_by_cause)],
      ["messages matched (late sender)", `${count(live.messages_matched)}, ` +
                                         `${count(live.messages_unmatched)} ends unmatched`],
      ["collectives matched (collective waiting)", count(live.collectives_matched)],
      ["message and collective ends not matched", causes(live.waiting_ends_not_matched_by_cause)],
    ]);
  }

  const lost = (losses) => Object.values(losses).reduce((sum, value) => sum + value, 0);
  const sum = (functions, key) => functions.reduce((total, f) => total + f[key], 0);

  function drawMpi() {
    table("#mpi-functions", adaptracePage.mpiFunctionColumns, live.mpi_functions);
    const spread = live.rank_spread.mpi_seconds;
    d3.select("#imbalance").text(`Time in MPI per rank: min ${seconds(spread.min)} s, mean ${seconds(spread.mean)} s, ` +
                                 `max ${seconds(spread.max)} s; imbalance (max/mean) ${spread.imbalance.toFixed(3)}.`);
    const span = live.rank_spread.span_seconds, computation = live.rank_spread.computation_seconds;
    d3.select("#computation").text(`Span per rank: min ${seconds(span.min)} s, max ${seconds(span.max)} s. ` +
                                   `Computation per rank (span less time in MPI): min ${seconds(computation.min)} s, ` +
                                   `mean ${seconds(computation.mean)} s, max ${seconds(computation.max)} s; ` +
                                   `imbalance (max/mean) ${computation.imbalance.toFixed(3)}.`);
    // The five ranks that wait most, in the analyzers' order (the feed's,
    // adaptrace-report's "ranks_waiting_most").
    const waiting = (r) => r.late_sender_seconds + r.collective_wait_seconds;
    d3.select("#waiting-most").text("Ranks that wait most (late sender + collective wait): " +
      live.ranks_waiting_most.slice(0, 5).map((rank) => `rank ${rank} (${seconds(waiting(live.per_rank[rank]))} s)`)
        .join(", ") + ".");
    table("#ranks", [
      {title: "rank", value: (r) => r.rank},
      {title: "state", value: (r) => (r.finished ? "finished"
                                       : live.ranks_without_analyzer.includes(r.rank) ? "without analyzer"
                                       : !r.connected ? "not heard from"
                                       : live.ended_by ? "ended before its last chunk" : "connected")},
      {title: "calls", value: (r) => count(sum(r.mpi_functions, "calls"))},
      {title: "span seconds", value: (r) => seconds(r.span_seconds)},
      {title: "MPI seconds", value: (r) => seconds(r.mpi_seconds)},
      {title: "computation seconds", value: (r) => seconds(r.computation_seconds)},
      {title: "late sender seconds", value: (r) => seconds(r.late_sender_seconds)},
      {title: "collective wait seconds", value: (r) => seconds(r.collective_wait_seconds)},
      {title: "bytes sent", value: (r) => bytes(sum(r.mpi_functions, "bytes_sent"))},
      {title: "bytes received", value: (r) => bytes(sum(r.mpi_functions, "bytes_received"))},
      {title: "samples", value: (r) => count(sum(r.sampled_functions, "exclusive_samples"))},
      {title: "calls not streamed", value: (r) => count(lost(r.calls_not_streamed_by_cause))},
      {title: "samples not streamed", value: (r) => count(lost(r.samples_not_streamed_by_cause))},
    ], live.per_rank);
    // Each rank's MPI functions, folded.
    d3.select("#rank-functions").selectAll("details").data(live.per_rank.filter((r) => r.mpi_functions.length))
      .join("details").each(function (rank) {
        d3.select(this).append("summary").text(`rank ${rank.rank}`);
        table(this, adaptracePage.mpiFunctionColumns, rank.mpi_functions);
      });
  }

  function drawSteps() {
    d3.select("#steps-unknown").text(`${count(live.segment_count)} pairs of MPI functions` +
      (live.time_steps_unknown ? `; ${count(live.time_steps_unknown)} steps not known (after calls not ` +
                                 `streamed one by one)` : "") + ".");
    table("#time-steps", [
      {title: "from → to", value: (s) => `${s.from} → ${s.to}`},
      {title: "instances", value: (s) => count(s.count)},
      {title: "total s", value: (s) => seconds(s.total_seconds)},
      {title: "mean s", value: (s) => seconds(s.mean_seconds)},
      {title: "median s", value: (s) => seconds(s.median_seconds)},
      {title: "p95 s", value: (s) => seconds(s.p95_seconds)},
      {title: "max s", value: (s) => seconds(s.max_seconds)},
      {title: "longest at", value: (s) => `rank ${s.max_rank}, iteration ${s.max_iteration}`},
      {title: "slowest rank", value: (s) => `${s.slowest_rank} (mean ${seconds(s.slowest_rank_mean_seconds)} s)`},
    ], live.segments);
  }

  function drawRates() {
    if (!live.sampling_rates.length) {
      d3.select("#sampling-rates").append("p").text("No rank is sampled (or none said so yet).");
      return;
    }
    table("#sampling-rates", [
      {title: "rank", value: (r) => r.rank},
      {title: "rate", value: (r) => `${count(r.steps[0].hz)} Hz from ${seconds(r.steps[0].seconds)} s`},
      {title: "halvings", value: (r) => r.steps.slice(1).map((step, k) =>
        `${seconds(step.seconds)} s: ${count(step.hz)} Hz (buffer ${bytes(r.buffer_use[2 * k].bytes)}B → ` +
        `${bytes(r.buffer_use[2 * k + 1].bytes)}B)`).join("; ") || "none"},
    ], live.sampling_rates);
  }

  function drawSamples() {
    if (live.samples === 0) {
      d3.select("#hot-functions").append("p").text("No samples streamed (yet, or sampling is off).");
      return;
    }
    const columns = [
      ...adaptracePage.sampledFunctionColumns(live.sampled_seconds),
      {title: "exclusive samples", value: (f) => count(f.exclusive_samples)},
      {title: "inclusive samples", value: (f) => count(f.inclusive_samples)},
    ];
    // The report lists them by exclusive time, most first.
    table("#hot-functions", columns, live.sampled_functions.slice(0, 30));
    const byInclusive = [...live.sampled_functions].sort((a, b) => b.inclusive_seconds - a.inclusive_seconds);
    table("#hot-inclusive", columns, byInclusive.slice(0, 15));
  }

  adaptracePage.drawSections([["state", drawState], ["mpi", drawMpi], ["steps", drawSteps], ["rates", drawRates],
                              ["samples", drawSamples]]);
  if (!live.final && !live.ended_by) {
    setTimeout(() => window.location.reload(), Math.max(1, live.interval_s) * 1000);
  }
})();
