// Draws the report page from the profile JSON in #profile-data with the
// embedded d3 and d3-flame-graph, and the tables, formats and section
// marker of page_common.js (adaptracePage, shared with the live page).
"use strict";
(function () {
  const profile = JSON.parse(document.getElementById("profile-data").textContent);
  const {seconds, bytes, duration, table} = adaptracePage;

  function drawMpi() {
    table("#mpi-functions", adaptracePage.mpiFunctionColumns, profile.mpi_functions);
    const labels = {
      span_seconds: "span", mpi_seconds: "time in MPI", computation_seconds: "computation",
      late_sender_seconds: "late sender", collective_wait_seconds: "collective wait",
    };
    table("#rank-spread", [
      {title: "per rank (s)", value: (key) => labels[key]},
      {title: "min", value: (key) => seconds(profile.rank_spread[key].min)},
      {title: "mean", value: (key) => seconds(profile.rank_spread[key].mean)},
      {title: "max", value: (key) => seconds(profile.rank_spread[key].max)},
      {title: "max/mean", value: (key) => profile.rank_spread[key].imbalance.toFixed(3)},
    ], Object.keys(labels));
    drawRankBars();
  }

  // One stacked bar per rank: computation, MPI less waiting, waiting.
  function drawRankBars() {
    const parts = [
      {key: "computation", color: "#4e79a7", value: (r) => r.computation_seconds},
      {key: "MPI (not waiting)", color: "#f28e2b",
       value: (r) => Math.max(0, r.mpi_seconds - r.late_sender_seconds - r.collective_wait_seconds)},
      {key: "waiting", color: "#e15759", value: (r) => Math.min(r.mpi_seconds, r.late_sender_seconds + r.collective_wait_seconds)},
    ];
    const ranks = profile.ranks;
    const barHeight = Math.max(4, Math.min(20, 600 / Math.max(1, ranks.length)));
    const margin = {left: 70, right: 20, top: 24, bottom: 30};
    const width = 800;
    const height = margin.top + margin.bottom + barHeight * ranks.length;
    const x = d3.scaleLinear().domain([0, d3.max(ranks, (r) => r.span_seconds) || 1]).range([margin.left, width - margin.right]);
    const y = d3.scaleBand().domain(d3.range(ranks.length)).range([margin.top, height - margin.bottom]).padding(0.15);
    const svg = d3.select("#rank-bars").append("svg").attr("width", width).attr("height", height);
    const stacked = d3.stack().keys(parts.map((p) => p.key)).value((rank, key) => parts.find((p) => p.key === key).value(rank))(ranks);
    svg.selectAll("g.part").data(stacked).join("g").attr("class", "part")
      .attr("fill", (series) => parts.find((p) => p.key === series.key).color)
      .selectAll("rect").data((series) => series.map((d, i) => [d, i])).join("rect")
      .attr("x", ([d]) => x(d[0])).attr("width", ([d]) => Math.max(0, x(d[1]) - x(d[0])))
      .attr("y", ([, i]) => y(i)).attr("height", y.bandwidth())
      .append("title").text(([d, i]) => `rank ${i}: ${seconds(d[1] - d[0])} s`);
    svg.append("g").attr("transform", `translate(0,${height - margin.bottom})`).call(d3.axisBottom(x));
    svg.append("g").attr("transform", `translate(${margin.left},0)`)
      .call(d3.axisLeft(y).tickValues(y.domain().filter((i) => ranks.length <= 32 || i % Math.ceil(ranks.length / 32) === 0)).tickFormat((i) => `rank ${i}`));
    const legend = svg.append("g").attr("transform", `translate(${margin.left},4)`);
    parts.forEach((part, i) => {
      legend.append("rect").attr("x", i * 160).attr("width", 12).attr("height", 12).attr("fill", part.color);
      legend.append("text").attr("x", i * 160 + 16).attr("y", 11).text(part.key);
    });
  }

  // An image of one pixel per cell (columns × rows), each cell coloured
  // by colorOf(its level), a level being -1 (empty) or 0 to 255. Drawn
  // scaled with drawImage, so that a redraw costs one copy of pixels
  // whatever the number of ranks, and no element per cell enters the DOM.
  function bitmap(columns, rows, levelAt, colorOf) {
    const palette = d3.range(-1, 256).map((level) => d3.rgb(colorOf(level)));
    const canvas = document.createElement("canvas");
    canvas.width = Math.max(1, columns);
    canvas.height = Math.max(1, rows);
    const context = canvas.getContext("2d");
    const image = context.createImageData(canvas.width, canvas.height);
    for (let row = 0; row < rows; row++) {
      for (let column = 0; column < columns; column++) {
        const rgb = palette[levelAt(column, row) + 1];
        const offset = 4 * (row * canvas.width + column);
        image.data[offset] = rgb.r;
        image.data[offset + 1] = rgb.g;
        image.data[offset + 2] = rgb.b;
        image.data[offset + 3] = 255;
      }
    }
    context.putImageData(image, 0, 0);
    return canvas;
  }

  // One row per location (a rank's threads together, "rank r / thread t"
  // where a rank has several), one cell per time bin, coloured from
  // computation (blue) to inside MPI (red) by the share of the location's
  // time in the bin, grey where it has no events (before its first, after
  // its last); the wheel or a drag zooms and pans in time. The rows'
  // labels are in the container's data-rows. Message lines, from a send
  // to its receive, are drawn while the checkbox is on and the window
  // holds at most MESSAGE_LINES_DRAWN of the page's lines (the number
  // drawn is in data-message-lines).
  const MESSAGE_LINES_DRAWN = 500;
  function drawTimeline(milliseconds) {
    const timeline = profile.timeline;
    const rows = timeline.rows;
    const bins = rows.length ? timeline.mpi_share[0].length : 0;
    const binSeconds = timeline.bin_seconds;
    const threadsOfRank = d3.rollup(rows, (locations) => locations.length, (row) => row.rank);
    const threaded = rows.length > threadsOfRank.size;
    const labels = rows.map((row) => (threadsOfRank.get(row.rank) > 1 ? `rank ${row.rank} / thread ${row.thread}`
                                                                        : `rank ${row.rank}`));
    const margin = {left: threaded ? 120 : 70, right: 20, top: 10, bottom: 30};
    const width = 1000;
    const plotWidth = width - margin.left - margin.right;
    const rowHeight = Math.max(1, Math.min(16, Math.floor(500 / Math.max(1, rows.length))));
    const plotHeight = rowHeight * rows.length;
    const container = d3.select("#timeline").style("position", "relative").attr("data-rows", JSON.stringify(labels));
    const toggle = container.append("label").style("display", "block");
    const showLines = toggle.append("input").attr("type", "checkbox").property("checked", true);
    toggle.append("span").text(` message lines (drawn while at most ${MESSAGE_LINES_DRAWN} are in view: zoom in)`);
    const canvas = container.append("canvas").attr("width", width).attr("height", plotHeight + margin.top)
      .style("display", "block");
    const svg = container.append("svg").attr("width", width).attr("height", margin.bottom + 4);
    const x = d3.scaleLinear().domain([0, bins * binSeconds]).range([margin.left, width - margin.right]);
    const color = d3.interpolateRgb("#4e79a7", "#e15759");
    const image = bitmap(bins, rows.length, (bin, row) => {
      const active = timeline.active_share[row][bin];
      return active > 0 ? Math.min(255, Math.round(255 * timeline.mpi_share[row][bin] / active)) : -1;
    }, (level) => (level < 0 ? "#eee" : color(level / 255)));
    const context = canvas.node().getContext("2d");
    context.imageSmoothingEnabled = false;
    const axis = svg.append("g").attr("transform", "translate(0,2)");
    // A rank's first row: a rank's threads are separated by thin white
    // lines, ranks by a dark one.
    const firstOfRank = rows.map((row, i) => i === 0 || rows[i - 1].rank !== row.rank);
    function draw(scale) {
      const [from, to] = scale.domain();
      context.clearRect(0, 0, width, plotHeight + margin.top);
      context.drawImage(image, from / binSeconds, 0, (to - from) / binSeconds, rows.length,
                        margin.left, margin.top, plotWidth, plotHeight);
      if (rowHeight > 4) {
        rows.forEach((row, i) => {
          context.fillStyle = threaded && i > 0 && firstOfRank[i] ? "#222" : "#fff";
          context.fillRect(margin.left, margin.top + i * rowHeight - (i > 0 ? 1 : 0), plotWidth, 1);
        });
      }
      context.fillStyle = "#222";
      const labelEvery = Math.ceil(12 / rowHeight);
      labels.forEach((label, i) => {
        if (i % labelEvery === 0) {
          context.fillText(label, 4, margin.top + i * rowHeight + Math.min(rowHeight, 12) - 2);
        }
      });
      axis.call(d3.axisBottom(scale).ticks(10).tickFormat((t) => `${seconds(t)} s`));
      drawMessageLines(scale, from, to);
    }
    function drawMessageLines(scale, from, to) {
      const inView = showLines.property("checked") ? timeline.message_lines.filter(
        ([, sent, , received]) => Math.max(sent, received) >= from && Math.min(sent, received) <= to) : [];
      const lines = inView.length <= MESSAGE_LINES_DRAWN ? inView : [];
      const middle = (row) => margin.top + (row + 0.5) * rowHeight;
      context.save();
      context.beginPath();
      context.rect(margin.left, margin.top, plotWidth, plotHeight);
      context.clip();
      context.strokeStyle = "#222";
      context.lineWidth = 1;
      context.beginPath();
      for (const [sendRow, sent, receiveRow, received] of lines) {
        context.moveTo(scale(sent), middle(sendRow));
        context.lineTo(scale(received), middle(receiveRow));
      }
      context.stroke();
      context.restore();
      container.attr("data-message-lines", lines.length);
    }
    const zoom = d3.zoom().scaleExtent([1, 100]).translateExtent([[margin.left, 0], [width - margin.right, 0]])
      .extent([[margin.left, 0], [width - margin.right, 0]])
      .on("zoom", (event) => draw(event.transform.rescaleX(x)));
    canvas.call(zoom);
    showLines.on("change", () => draw(d3.zoomTransform(canvas.node()).rescaleX(x)));
    const start = performance.now();
    draw(x);
    // What each zoom or pan step costs.
    milliseconds.timeline_redraw = Math.round(10 * (performance.now() - start)) / 10;
  }

  // The computation between consecutive MPI calls: a table of the kinds
  // with the most total time, and for each of them that has several
  // instances the histogram of their durations (all ranks and
  // iterations), the longest instance named above its bar.
  function drawSteps() {
    const segments = profile.segments;
    const label = (s) => `${s.from} → ${s.to}`;
    table("#step-table", [
      {title: "from → to", value: label},
      {title: "instances", value: (s) => s.count},
      {title: "total", value: (s) => duration(s.total_seconds)},
      {title: "median", value: (s) => duration(s.median_seconds)},
      {title: "p95", value: (s) => duration(s.p95_seconds)},
      {title: "max", value: (s) => duration(s.max_seconds)},
      {title: "longest at", value: (s) => `rank ${s.max_rank}, iteration ${s.max_iteration}`},
      {title: "slowest rank (its mean)", value: (s) => `${s.slowest_rank} (${duration(s.slowest_rank_mean_seconds)})`},
    ], segments);
    const width = 460, height = 190;
    const margin = {left: 45, right: 15, top: 36, bottom: 34};
    const charts = d3.select("#step-histograms").selectAll("div.step")
      .data(segments.filter((s) => s.count > 1).slice(0, 8)).join("div").attr("class", "step")
      .attr("title", (s) => `${s.from_path}\n→ ${s.to_path}`);
    charts.each(function (segment) {
      const bins = segment.histogram.length;
      const span = segment.max_seconds - segment.min_seconds;
      const binSeconds = span / bins;
      const x = d3.scaleLinear().domain([segment.min_seconds, segment.max_seconds + (span > 0 ? 0 : 1e-9)])
        .range([margin.left, width - margin.right]);
      const y = d3.scaleLinear().domain([0, d3.max(segment.histogram)]).nice()
        .range([height - margin.bottom, margin.top]);
      const svg = d3.select(this).append("svg").attr("width", width).attr("height", height);
      svg.append("text").attr("x", margin.left).attr("y", 13).attr("font-weight", "bold").text(label(segment));
      svg.append("text").attr("x", margin.left).attr("y", 27).attr("font-size", 11)
        .text(`${segment.count} instances, median ${duration(segment.median_seconds)}, ` +
              `longest ${duration(segment.max_seconds)}: rank ${segment.max_rank}, iteration ${segment.max_iteration}`);
      const barWidth = (width - margin.left - margin.right) / bins;
      svg.append("g").attr("fill", "#4e79a7").selectAll("rect").data(segment.histogram).join("rect")
        .attr("x", (count, i) => margin.left + i * barWidth).attr("width", Math.max(1, barWidth - 1))
        // A bin of one instance stays visible beside bins of thousands.
        .attr("y", (count) => Math.min(y(count), y(0) - (count > 0 ? 2 : 0)))
        .attr("height", (count) => Math.max(y(0) - y(count), count > 0 ? 2 : 0))
        .append("title").text((count, i) =>
          `${count} instances of ${duration(segment.min_seconds + i * binSeconds)} to ` +
          `${duration(segment.min_seconds + (i + 1) * binSeconds)}`);
      svg.append("g").attr("transform", `translate(0,${height - margin.bottom})`)
        .call(d3.axisBottom(x).ticks(6).tickFormat(duration));
      svg.append("text").attr("x", width - margin.right).attr("y", height - 3).attr("text-anchor", "end")
        .attr("font-size", 11).text("duration");
      svg.append("g").attr("transform", `translate(${margin.left},0)`)
        .call(d3.axisLeft(y).ticks(Math.min(4, y.domain()[1])).tickFormat(d3.format("d")));
    });
  }

  // Sender rows, receiver columns; hovering a cell names it and its figure.
  function drawMatrix(containerId, cells, format) {
    const ranks = profile.rank_count;
    const cell = Math.max(1, Math.min(40, Math.floor(600 / Math.max(1, ranks))));
    const margin = 50;
    const size = margin + cell * ranks;
    const most = d3.max(cells) || 1;
    const image = bitmap(ranks, ranks, (column, row) => {
      const value = cells[row * ranks + column];
      return value > 0 ? Math.round(255 * value / most) : -1;
    }, (level) => (level < 0 ? "#f4f4f4" : d3.interpolateYlOrRd(level / 255)));
    const canvas = d3.select(containerId).append("canvas").attr("width", size + 20).attr("height", size + 20);
    const context = canvas.node().getContext("2d");
    context.imageSmoothingEnabled = false;
    context.drawImage(image, margin, margin, cell * ranks, cell * ranks);
    context.fillStyle = "#222";
    context.font = "14px sans-serif";
    context.fillText("receiver →", margin, 20);
    context.save();
    context.translate(20, margin);
    context.rotate(Math.PI / 2);
    context.fillText("sender →", 0, 0);
    context.restore();
    canvas.on("mousemove", (event) => {
      const [left, top] = d3.pointer(event);
      const column = Math.floor((left - margin) / cell);
      const row = Math.floor((top - margin) / cell);
      const inside = column >= 0 && row >= 0 && column < ranks && row < ranks;
      canvas.attr("title", inside ? `rank ${row} → rank ${column}: ${format(cells[row * ranks + column])}` : null);
    });
  }

  function drawSamples() {
    if (profile.samples === 0) {
      d3.select("#flame").append("p").text("No samples in this archive (sampling was off).");
      return;
    }
    const percent = (value) => (100 * value / profile.sampled_seconds).toFixed(1) + " %";
    // A column per recorded counter (ADAPTRACE_METRICS) and kind of total,
    // whole counts as the JSON has them; the instructions per cycle where
    // the report could compute them.
    const counters = profile.counters || [];
    const count = d3.format(",.0f");
    const counterColumns = (key, label) => counters.map((name) => (
      {title: `${name}${label}`, value: (row) => count(row[key][name])}));
    const ipcColumn = (key, label) => (profile.sampled_functions.some((f) => `${key}_ipc` in f)
      ? [{title: `IPC${label}`, value: (row) => (`${key}_ipc` in row ? row[`${key}_ipc`].toFixed(2) : "")}] : []);
    // Misses per 1,000 instructions, a column per miss counter where the
    // report could compute them (instructions recorded).
    const perKiloColumns = (rows, key, label) => {
      const member = `${key}_per_1k_instructions`;
      const names = [...new Set(rows.flatMap((row) => Object.keys(row[member] || {})))];
      return names.map((name) => ({title: `${name} per 1k instructions${label}`,
        value: (row) => (row[member] && name in row[member] ? row[member][name].toFixed(3) : "")}));
    };
    table("#hot-functions", [
      ...adaptracePage.sampledFunctionColumns(profile.sampled_seconds),
      ...counterColumns("exclusive_counts", " exclusive"), ...ipcColumn("exclusive_counts", " exclusive"),
      ...perKiloColumns(profile.sampled_functions, "exclusive_counts", " exclusive"),
      ...counterColumns("inclusive_counts", " inclusive"), ...ipcColumn("inclusive_counts", " inclusive"),
      ...perKiloColumns(profile.sampled_functions, "inclusive_counts", " inclusive"),
    ], profile.sampled_functions.slice(0, 30));
    table("#hot-paths", [
      {title: "call path", value: (p) => p.path},
      {title: "source lines", value: (p) => p.lines},
      {title: "seconds", value: (p) => seconds(p.seconds)},
      {title: "share", value: (p) => percent(p.seconds)},
      ...counterColumns("counts", ""), ...perKiloColumns(profile.hot_paths, "counts", ""),
    ], profile.hot_paths.slice(0, 20));
    table("#hot-lines", [
      {title: "source line", value: (l) => `${l.file}:${l.line}`},
      {title: "function", value: (l) => l.function},
      {title: "exclusive (s)", value: (l) => seconds(l.seconds)},
      {title: "exclusive", value: (l) => percent(l.seconds)},
    ], profile.hot_lines.slice(0, 30));
    drawFlame(counters);
  }

  // The flame graph weighted by the sampled seconds or, chosen above it
  // (or by #flame=COUNTER in the page's address), by a recorded counter:
  // each frame's inclusive count (the JSON's counts, in the order of
  // profile.counters).
  function drawFlame(counters) {
    const wanted = new URLSearchParams(window.location.hash.slice(1)).get("flame");
    let weight = counters.indexOf(wanted);
    const container = d3.select("#flame");
    if (counters.length > 0) {
      const select = container.append("label").text("weight: ").append("select").attr("id", "flame-weight");
      select.selectAll("option").data(["seconds", ...counters]).join("option")
        .attr("value", (name, i) => i - 1).attr("selected", (name, i) => (i - 1 === weight ? "" : null)).text((name) => name);
      select.on("change", (event) => {
        weight = Number(event.target.value);
        draw();
      });
    }
    const graph = container.append("div").attr("id", "flame-graph");
    const count = d3.format(",.0f");
    const weighted = (node) => ({name: node.name, value: weight < 0 ? node.value : node.counts[weight],
                                 children: (node.children || []).map(weighted)});
    function draw() {
      const tree = weighted(profile.flame);
      const share = (value) => (tree.value > 0 ? (100 * value / tree.value).toFixed(1) : "0.0") + " %";
      const label = weight < 0
        ? (node) => `${node.data.name}: ${seconds(node.value)} s (${share(node.value)})`
        : (node) => `${node.data.name}: ${count(node.value)} ${counters[weight]} (${share(node.value)})`;
      const chart = flamegraph.default().width(Math.min(1200, window.innerWidth - 40) || 960).cellHeight(18)
        .transitionDuration(0).label(label);
      graph.selectAll("*").remove();
      graph.attr("data-weight", weight < 0 ? "seconds" : counters[weight]).datum(tree).call(chart);
    }
    draw();
  }

  const threadName = (l) => `rank ${l.rank} thread ${l.thread}`;

  // The charts of the adaptive buffer, one above the other, share one time
  // axis: from the start to the end of the run (as the timeline cuts it
  // into bins), or to a later rate step or flush end. A chart of height in
  // the element selected, with that axis drawn; its x scale.
  const bufferMargin = {left: 110, right: 140, top: 10, bottom: 34};
  function bufferChart(selector, height) {
    const margin = bufferMargin;
    const width = 1000;
    const end = Math.max(profile.timeline.bin_seconds * (profile.timeline.mpi_share[0] || []).length,
                         d3.max(profile.sampling_rates, (l) => l.steps[l.steps.length - 1].seconds) || 0,
                         d3.max(profile.flushes.events, (f) => f.seconds + f.duration_seconds) || 0);
    const x = d3.scaleLinear().domain([0, end || 1]).range([margin.left, width - margin.right]);
    const svg = d3.select(selector).append("svg").attr("width", width).attr("height", height);
    svg.append("g").attr("transform", `translate(0,${height - margin.bottom})`)
      .call(d3.axisBottom(x).ticks(10).tickFormat((t) => `${seconds(t)} s`));
    return {svg, x, margin, width, end: x.domain()[1]};
  }

  // The adaptive buffer at work: each sampled location's rate as a step
  // line over the run (log scale: every halving is one equal step down),
  // each halving marked with a dot and listed in its title.
  function drawRates() {
    const locations = profile.sampling_rates;
    if (locations.length === 0) {
      d3.select("#rates").append("p").text("No sampling rate in this archive (sampling was off).");
      return;
    }
    const height = 320;
    const {svg, x, margin, width, end} = bufferChart("#rates", height);
    const rates = locations.flatMap((l) => l.steps.map((s) => s.hz));
    const y = d3.scaleLog().base(2).domain([d3.min(rates) / 1.5, d3.max(rates) * 1.5])
      .range([height - margin.bottom, margin.top]);
    const color = d3.scaleOrdinal(d3.schemeTableau10);
    svg.append("g").attr("transform", `translate(${margin.left},0)`)
      .call(d3.axisLeft(y).tickValues(Array.from(new Set(rates))).tickFormat((v) => `${d3.format("~g")(v)} Hz`));
    const name = threadName;
    // The last value holds until the end of the run.
    const line = d3.line().curve(d3.curveStepAfter).x((point) => x(point.seconds)).y((point) => y(point.hz));
    const rows = svg.selectAll("g.rate").data(locations).join("g").attr("class", "rate");
    rows.append("path").attr("fill", "none").attr("stroke-width", 1.5).attr("stroke", (l, i) => color(i))
      .attr("d", (l) => line([...l.steps, {seconds: end, hz: l.steps[l.steps.length - 1].hz}]))
      .append("title").text(name);
    rows.selectAll("circle.halving").data((l, i) => l.steps.slice(1).map((s) => ({...s, location: l, index: i})))
      .join("circle").attr("class", "halving").attr("r", 4).attr("cx", (s) => x(s.seconds)).attr("cy", (s) => y(s.hz))
      .attr("fill", (s) => color(s.index))
      .append("title").text((s) => `${name(s.location)}: halved at ${seconds(s.seconds)} s to ${d3.format("~g")(s.hz)} Hz`);
    if (locations.length <= 16) {
      rows.append("text").attr("x", width - margin.right + 6)
        .attr("y", (l) => y(l.steps[l.steps.length - 1].hz)).attr("dy", "0.35em").attr("font-size", 11)
        .attr("fill", (l, i) => color(i)).text(name);
    }
  }

  // Under the rates: the buffer's use at each halving of each location,
  // a line from the bytes in use just before the drop (open dot) down to
  // just after (filled dot). Only these values are known: nothing is drawn
  // between halvings.
  function drawBufferUse() {
    // Each location in the color of its rate line.
    const halvings = profile.sampling_rates.flatMap((l, index) => {
      const pairs = [];
      for (let u = 0; u + 1 < l.buffer_use.length; u += 2) {
        pairs.push({location: l, index, seconds: l.buffer_use[u].seconds,
                    before: l.buffer_use[u].bytes, after: l.buffer_use[u + 1].bytes});
      }
      return pairs;
    });
    if (halvings.length === 0) {
      d3.select("#buffer-use").append("p").text("No buffer use in this archive (no halving, or sampling was off).");
      return;
    }
    const height = 220;
    const {svg, x, margin} = bufferChart("#buffer-use", height);
    const y = d3.scaleLinear().domain([0, d3.max(halvings, (h) => h.before) || 1]).nice()
      .range([height - margin.bottom, margin.top]);
    const color = d3.scaleOrdinal(d3.schemeTableau10);
    svg.append("g").attr("transform", `translate(${margin.left},0)`)
      .call(d3.axisLeft(y).ticks(5).tickFormat((v) => `${bytes(v)}B`));
    const marks = svg.selectAll("g.use").data(halvings).join("g").attr("class", "use")
      .attr("stroke", (h) => color(h.index)).attr("fill", (h) => color(h.index));
    marks.append("line").attr("x1", (h) => x(h.seconds)).attr("x2", (h) => x(h.seconds))
      .attr("y1", (h) => y(h.before)).attr("y2", (h) => y(h.after)).attr("stroke-width", 2);
    marks.append("circle").attr("class", "use-before").attr("r", 3.5).attr("fill", "white")
      .attr("cx", (h) => x(h.seconds)).attr("cy", (h) => y(h.before));
    marks.append("circle").attr("class", "use-after").attr("r", 3.5)
      .attr("cx", (h) => x(h.seconds)).attr("cy", (h) => y(h.after));
    marks.append("title").text((h) => `${threadName(h.location)} halved at ${seconds(h.seconds)} s: ` +
                                      `${bytes(h.before)}B in use before the drop, ${bytes(h.after)}B after`);
  }

  // Beside the rates: the mid-run flushes, one row per location that
  // flushed, each flush a bar from its start for its duration (at least a
  // pixel wide), on the time axis of the rates.
  function drawFlushes() {
    const flushes = profile.flushes;
    const summary = d3.select("#flushes").append("p").attr("class", "flush-summary");
    // Locations whose events end early (folded into skeleton.adts, or stopped).
    const ends = profile.events_end ? profile.events_end.per_location : [];
    if (ends.length > 0) {
      d3.select("#flushes").append("p").attr("class", "events-end").text(
        `Events end early on ${ends.length} thread${ends.length === 1 ? "" : "s"} (from ` +
        `${duration(Math.min(...ends.map((end) => end.seconds)))} on): ` +
        (profile.events_end.skeleton ? "their later MPI calls are folded, only in skeleton.adts."
                                     : "their later events were not recorded."));
    }
    if (flushes.count === 0) {
      summary.text(ends.length > 0 ? "No flush." : "No flush: the buffer held every event.");
      return;
    }
    summary.text(`${flushes.count} flush${flushes.count === 1 ? "" : "es"}, ${duration(flushes.seconds)} in all, ` +
                 `on ${flushes.per_location.length} thread${flushes.per_location.length === 1 ? "" : "s"}`);
    const name = threadName;
    const rows = flushes.per_location.map(name);
    const height = bufferMargin.top + bufferMargin.bottom + 16 * rows.length;
    const {svg, x, margin} = bufferChart("#flushes", height);
    const y = d3.scaleBand().domain(rows).range([margin.top, height - margin.bottom]).padding(0.2);
    svg.append("g").attr("transform", `translate(${margin.left},0)`).call(d3.axisLeft(y));
    svg.selectAll("rect.flush").data(flushes.events).join("rect").attr("class", "flush")
      .attr("x", (f) => x(f.seconds)).attr("y", (f) => y(name(f))).attr("height", y.bandwidth())
      .attr("width", (f) => Math.max(1, x(f.seconds + f.duration_seconds) - x(f.seconds))).attr("fill", "#d62728")
      .append("title").text((f) => `${name(f)}: flushed at ${seconds(f.seconds)} s for ${duration(f.duration_seconds)}`);
  }

  // The names of a phase's first few figures, largest first.
  function topNames(figures) {
    return figures.slice(0, 3).map((f) => `${f.name} ${duration(f.seconds)}`).join(", ");
  }

  function drawRegions() {
    if (profile.user_regions.length === 0) {
      d3.select("#user-regions").append("p").attr("class", "note").text("The program marked no region.");
    } else {
      table("#user-regions", [
        {title: "region", value: (r) => r.name},
        {title: "kind", value: (r) => (r.phase ? "phase" : "region")},
        {title: "instances", value: (r) => r.instances},
        {title: "inclusive s", value: (r) => seconds(r.inclusive_seconds)},
        {title: "exclusive s", value: (r) => seconds(r.exclusive_seconds)},
      ], profile.user_regions);
    }
    if (profile.phases.length > 0) {
      table("#phases", [
        {title: "phase", value: (p) => p.name},
        {title: "instances", value: (p) => p.instances},
        {title: "seconds", value: (p) => seconds(p.seconds)},
        {title: "MPI s", value: (p) => seconds(p.mpi_seconds)},
        {title: "sampled s", value: (p) => seconds(p.sampled_seconds)},
        {title: "MPI functions", value: (p) => topNames(p.mpi_functions)},
        {title: "hot functions", value: (p) => topNames(p.hot_functions)},
      ], profile.phases);
    }
  }

  adaptracePage.drawSections([
    ["mpi", drawMpi],
    ["timeline", drawTimeline],
    ["matrix", () => {
      drawMatrix("#matrix-bytes", profile.matrix_bytes, (v) => `${bytes(v)}B`);
      drawMatrix("#matrix-messages", profile.matrix_messages, (v) => `${v} messages`);
    }],
    ["steps", drawSteps],
    ["flame", drawSamples],
    ["regions", drawRegions],
    ["rates", drawRates],
    ["buffer-use", drawBufferUse],
    ["flushes", drawFlushes],
  ]);
})();
