/* Historical comparisons: choose the two columns the Δ% column compares (first → last is what
   the page is built with, and what a reader without JavaScript sees). Values are read back from
   the table's own cells, so the recomputed Δ% is exactly what the columns show; the new Δ% cell
   links to the run of the "to" column, like every number on the site. */
(function () {
  "use strict";

  function tableAfter(marker) {
    for (let node = marker.nextElementSibling; node; node = node.nextElementSibling) {
      const table = node.matches("table") ? node : node.querySelector("table");
      if (table) return table;
    }
    return null;
  }

  function value(cell) {
    const number = Number(cell.textContent.trim().split(" ")[0].replace(/,/g, ""));
    return cell.textContent.trim() === "" || !Number.isFinite(number) ? null : number;
  }

  function picker(label, columns, selected) {
    const select = document.createElement("select");
    columns.forEach(function (text, index) {
      const option = document.createElement("option");
      option.value = String(index + 1);
      option.textContent = "column " + (index + 1) + ": " + text;
      option.selected = index + 1 === selected;
      select.appendChild(option);
    });
    const wrapper = document.createElement("label");
    wrapper.append(label + " ", select, " ");
    return [wrapper, select];
  }

  function recompute(table, from, to) {
    const header = table.tHead.rows[0].cells;
    const last = header.length - 1;
    header[last].textContent = "Δ% column " + from + " → " + to;
    Array.from(table.tBodies[0].rows).forEach(function (row) {
      if (row.cells.length !== header.length || row.cells[0].textContent.indexOf("⚠") === 0) return;
      const a = value(row.cells[from]);
      const b = value(row.cells[to]);
      const cell = row.cells[last];
      cell.textContent = "";
      if (a === null || b === null || a === 0 || from === to) return;
      const change = (b / a - 1) * 100;
      const text = (change >= 0 ? "+" : "") + change.toFixed(1) + "%";
      const source = row.cells[to].querySelector("a");
      if (source) {
        const link = document.createElement("a");
        link.href = source.getAttribute("href");
        link.textContent = text;
        cell.appendChild(link);
      } else {
        cell.textContent = text;
      }
    });
  }

  function setUp(marker) {
    const table = tableAfter(marker);
    if (!table || !table.tHead) return;
    const header = Array.from(table.tHead.rows[0].cells);
    const columns = header.slice(1, -1).map(function (cell) { return cell.textContent.trim(); });
    if (columns.length < 2) return;
    const [fromLabel, fromSelect] = picker("Δ% from", columns, Number(marker.dataset.from));
    const [toLabel, toSelect] = picker("to", columns, Number(marker.dataset.to));
    function update() { recompute(table, Number(fromSelect.value), Number(toSelect.value)); }
    fromSelect.addEventListener("change", update);
    toSelect.addEventListener("change", update);
    marker.append(fromLabel, toLabel);
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".tm-delta-picker").forEach(setUp);
  });
})();

/* The page every older run is drawn on (runs/_run.html; reports/build/run_site.py): its
   address names the run (?run=<slug>, where the run's own address sends the reader), its data
   file beside it (gzipped JSON from reports/pages/run_data.py) holds the page's blocks and its
   invocation rows: each row its anchor, whether it failed, and its cells as the newest runs'
   pages show them. Text is set as text (never HTML); a number of a row links to its own row,
   so a copied link lands on the invocation, and a link that arrived with an anchor is
   scrolled to once the page is drawn. Each table gets its CSV download, made here. */
(function () {
  "use strict";

  async function jsonOf(response) {
    const bytes = new Uint8Array(await response.arrayBuffer());
    // A server may already have undone the gzip (Content-Encoding): only magic bytes say.
    const gzipped = bytes.length > 1 && bytes[0] === 0x1f && bytes[1] === 0x8b;
    const stream = new Blob([bytes]).stream();
    const text = await new Response(
      gzipped ? stream.pipeThrough(new DecompressionStream("gzip")) : stream).text();
    return JSON.parse(text);
  }

  function element(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  function cellNode(tag, value, right) {
    const cell = element(tag);
    if (right) cell.style.textAlign = "right";
    if (Array.isArray(value)) {
      const a = element("a", value[0]);
      a.setAttribute("href", value[1]);
      cell.appendChild(a);
    } else {
      cell.textContent = value;
    }
    return cell;
  }

  // A table's CSV as the site writes every other table's (reports/build/table_csv.py).
  function csvLink(csv) {
    const a = element("a", "Download this table as CSV");
    a.download = csv[0];
    a.href = URL.createObjectURL(new Blob([csv[1]], {type: "text/csv"}));
    const p = element("p", undefined, "tm-csv");
    p.appendChild(a);
    return p;
  }

  // Material wraps a page's tables when it loads; these come later, so they are wrapped here.
  function wrapped(table) {
    const outer = element("div", undefined, "md-typeset__scrollwrap");
    const inner = element("div", undefined, "md-typeset__table");
    inner.appendChild(table);
    outer.appendChild(inner);
    return outer;
  }

  function tableOf(columns, right, rows, className) {
    const table = element("table", undefined, className);
    const head = table.createTHead().insertRow();
    columns.forEach(function (c, i) { head.appendChild(cellNode("th", c, right[i])); });
    const body = table.createTBody();
    rows.forEach(function (r) {
      const tr = body.insertRow();
      r.forEach(function (value, i) { tr.appendChild(cellNode("td", value, right[i])); });
    });
    return table;
  }

  function invocationRow(cells, linked, failed, id) {
    const tr = element("tr", undefined, failed ? "tm-failed" : "");
    tr.id = id;
    cells.forEach(function (text, i) {
      tr.appendChild(cellNode("td", linked[i] ? [text, "#" + id] : text, false));
    });
    return tr;
  }

  function invocations(data) {
    const table = tableOf(data.header, [], [], "tm-invocations");
    const body = document.createDocumentFragment();
    data.rows.forEach(function (r) {
      body.appendChild(invocationRow(r.slice(2), data.linked, r[1], r[0]));
    });
    table.tBodies[0].appendChild(body);
    return [wrapped(table)];
  }

  function heading(tag, text, id) {
    const h = element(tag, text);
    if (id) {
      h.id = id;
      const a = element("a", "¶", "headerlink");
      a.href = "#" + id;
      a.title = "Permanent link";
      h.appendChild(a);
    }
    return h;
  }

  function admonition(kind, title, body) {
    const box = element("div", undefined, "admonition " + kind);
    box.append(element("p", title, "admonition-title"), body);
    return box;
  }

  function pre(text) {
    const block = element("pre");
    block.appendChild(element("code", text));
    return block;
  }

  function blockNodes(block, data) {
    if (block.table) {
      const t = block.table;
      return [wrapped(tableOf(t[0], t[1], t[2])), csvLink(block.csv)];
    }
    if (block.note) return [admonition(block.note, block.title, element("p", block.text))];
    if (block.reproduce) {
      const code = pre(block.reproduce.join("\n") + "\n");
      // Material's copy button, as its bundle adds one to each code block at load: its
      // clipboard handler listens on the document, so a button drawn later copies too.
      code.id = "tm-reproduce-code";
      const copy = element("button", undefined, "md-clipboard md-icon");
      copy.title = "Copy to clipboard";
      copy.dataset.clipboardTarget = "#" + code.id + " > code";
      code.insertBefore(copy, code.firstChild);
      const box = admonition("tip", "How to reproduce", code);
      box.classList.add("tm-reproduce");
      return [box];
    }
    if (block.h2) return [heading("h2", block.h2, block.id)];
    if (block.h3) return [heading("h3", block.h3)];
    if (block.p) return [element("p", block.p)];
    if (block.invocations) return invocations(data);
    if (block.details) {
      const details = element("details");
      details.append(element("summary", block.details), pre(block.pre));
      return [details];
    }
    return [];
  }

  async function draw(holder) {
    const note = holder.querySelector(".tm-run-note");
    const run = new URLSearchParams(location.search).get("run") || "";
    try {
      // A run's slug (reports/pages/format.py): nothing else is fetched.
      if (!/^[A-Za-z0-9][A-Za-z0-9.-]*$/.test(run)) throw new Error("no run named");
      const file = run + holder.dataset.suffix;
      const response = await fetch(file);
      if (!response.ok) throw new Error(file + ": HTTP " + response.status);
      const data = await jsonOf(response);
      const nodes = [];
      data.page.blocks.forEach(function (block) { nodes.push.apply(nodes, blockNodes(block, data)); });
      holder.replaceChildren.apply(holder, nodes);
      const h1 = document.querySelector("article h1");
      if (h1 && h1.firstChild) h1.firstChild.textContent = data.page.title;
      // The title Material's header shows once the page is scrolled.
      document.querySelectorAll("[data-md-component=header-topic] .md-ellipsis")
        .forEach(function (topic) { topic.textContent = data.page.title; });
      document.title = document.title.replace(/^Run/, data.page.title);
      const target = location.hash && document.getElementById(location.hash.slice(1));
      if (target) target.scrollIntoView();
    } catch (error) {
      if (note) note.textContent = "This run's page could not be drawn (" + error.message +
        "): open it from a link to the run, with the site served over HTTP (for example " +
        "python3 -m http.server in its folder) rather than opened as a file.";
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".tm-run-data").forEach(draw);
  });
})();

/* A point of a chart opens the run it came from: its customdata ends with the run page's href
   (reports/pages/charts.py), so every number on a chart links to the run that produced it. */
(function () {
  "use strict";

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".js-plotly-plot").forEach(function (plot) {
      if (typeof plot.on !== "function") return;
      plot.on("plotly_click", function (event) {
        const point = event && event.points && event.points[0];
        const data = point && point.customdata;
        const href = Array.isArray(data) ? data[data.length - 1] : null;
        if (typeof href === "string" && /\.html(#|$)/.test(href)) window.location.href = href;
      });
    });
  });
})();

/* A trend chart (reports/pages/charts.py, `_trend_data`): per series a min–max band (two traces,
   filled between) under the median line. The page holds each series' medians, mins and maxes
   once, and per point the positions of its run and anchor in the chart's tables (a point's x
   is its run's start, kept once per run); the traces and each point's hover data are made
   here, its customdata ending with the run page's href, as the click handler above expects. */
function tidemarkTrend(id, data, layout, config) {
  "use strict";
  const traces = [];
  // The chart's runs and anchors, or the page's table it shares with its other charts.
  const tables = typeof data.table === "string" ? window.tidemarkRuns[data.table] : data;
  data.series.forEach(function (s) {
    let position = 0;  // s.run: each point's position in the runs table, as a step
    const run = s.run.map(function (step) { position += step; return position; });
    const x = run.map(function (at) { return tables.runs[at][3]; });  // its run's start
    // Each band trace its own objects, as plotly was given them before (the x array is shared).
    function band(trace) {
      return Object.assign({type: "scatter", x: x, mode: "lines", line: {width: 0},
                            legendgroup: s.key, showlegend: false, hoverinfo: "skip"}, trace);
    }
    traces.push(band({y: s.high, name: s.name + " max"}));
    traces.push(band({y: s.low, name: s.name + " min", fill: "tonexty", fillcolor: s.fill}));
    const custom = run.map(function (at, i) {
      const run = tables.runs[at];
      const anchor = tables.anchors[s.anchor[i]];
      return [run[0], run[1], s.low[i], s.high[i], anchor ? run[2] + "#" + anchor : run[2]];
    });
    traces.push({type: "scatter", x: x, y: s.median, name: s.name, mode: s.mode,
                 line: {color: s.color}, legendgroup: s.key, customdata: custom,
                 hovertemplate: data.hover, cliponaxis: false});
  });
  Plotly.newPlot(id, traces, layout, config);
}
