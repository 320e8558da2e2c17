// What the report page (page.js, from adaptrace-report --html) and the live
// page (live_page.js, live/report.html from the analyzer) share, as the
// global adaptracePage: number formats, tables, the MPI function and
// sampled function columns, and the marker the headless-browser tests and
// benchmarks/report/page.py read (#drawn: the sections drawn, and in its
// data-milliseconds what each took to draw). Embedded before either page's
// script with the d3 it uses.
"use strict";
const adaptracePage = (function () {
  const seconds = d3.format(".4~f");
  const bytes = d3.format(".3~s");
  const duration = (value) => (value > 0 ? `${d3.format(".3~s")(value)}s` : "0 s");

  // A table under parent: a header of the columns' titles, a row per row
  // of rows, each cell the column's value(row) as text.
  function table(parent, columns, rows) {
    const element = d3.select(parent).append("table");
    element.append("tr").selectAll("th").data(columns).join("th").text((column) => column.title);
    element.selectAll("tr.row").data(rows).join("tr").attr("class", "row")
      .selectAll("td").data((row) => columns.map((column) => column.value(row))).join("td").text((text) => text);
  }

  // The MPI profile's columns: a function's calls, exclusive seconds and
  // bytes (adaptrace-report's mpi_functions and the live report's have the
  // same fields).
  const mpiFunctionColumns = [
    {title: "function", value: (f) => f.name},
    {title: "calls", value: (f) => f.calls},
    {title: "seconds", value: (f) => seconds(f.seconds)},
    {title: "bytes sent", value: (f) => bytes(f.bytes_sent)},
    {title: "bytes received", value: (f) => bytes(f.bytes_received)},
  ];

  // The sampled profile's columns: a function's exclusive and inclusive
  // seconds, and their shares of sampledSeconds.
  function sampledFunctionColumns(sampledSeconds) {
    const percent = (value) => (sampledSeconds > 0 ? (100 * value / sampledSeconds).toFixed(1) : "0.0") + " %";
    return [
      {title: "function", value: (f) => f.name},
      {title: "exclusive (s)", value: (f) => seconds(f.exclusive_seconds)},
      {title: "exclusive", value: (f) => percent(f.exclusive_seconds)},
      {title: "inclusive (s)", value: (f) => seconds(f.inclusive_seconds)},
      {title: "inclusive", value: (f) => percent(f.inclusive_seconds)},
    ];
  }

  // Draws each [name, draw] section in turn, timing it (draw may add
  // timings of its own to the milliseconds it is given), and once all are
  // drawn writes their names and milliseconds into #drawn: a section that
  // throws leaves the marker empty.
  function drawSections(sections) {
    const drawn = [];
    const milliseconds = {};
    for (const [name, draw] of sections) {
      const start = performance.now();
      draw(milliseconds);
      milliseconds[name] = Math.round(performance.now() - start);
      drawn.push(name);
    }
    const marker = document.getElementById("drawn");
    marker.dataset.milliseconds = JSON.stringify(milliseconds);
    marker.textContent = drawn.join(" ");
  }

  return {seconds, bytes, duration, table, mpiFunctionColumns, sampledFunctionColumns, drawSections};
})();
