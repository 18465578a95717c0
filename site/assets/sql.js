/* The SQL page: DuckDB-WASM (served from this site, assets/duckdb/) over the Parquet files
   published with the site (data/manifest.json lists them). Each table becomes a view over its
   files; results are shown as a table (a row with a run_id links to its run page), a plotly
   chart, and a CSV download. Nothing here decides anything: it runs the reader's SQL. */
import * as duckdb from "./duckdb/duckdb-browser.mjs";

const ROOT = new URL("..", import.meta.url);
const SHOWN_ROWS = 1000;
const state = { connection: null, result: null, runPages: {} };

function element(tag, text, attrs) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = text;
  Object.entries(attrs || {}).forEach(([key, value]) => node.setAttribute(key, value));
  return node;
}

function say(text, failed) {
  const status = document.getElementById("tm-sql-status");
  status.textContent = text;
  status.classList.toggle("tm-error", Boolean(failed));
}

async function openDatabase() {
  const bundle = {
    mainModule: new URL("duckdb/duckdb-eh.wasm", import.meta.url).href,
    mainWorker: new URL("duckdb/duckdb-browser-eh.worker.js", import.meta.url).href,
  };
  const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), new Worker(bundle.mainWorker));
  await db.instantiate(bundle.mainModule);
  // A server without range requests (Python's http.server) still works: files are read whole.
  await db.open({ filesystem: { allowFullHTTPReads: true } });
  const manifest = await (await fetch(new URL("data/manifest.json", ROOT))).json();
  const connection = await db.connect();
  for (const table of manifest.tables) {
    // A table with a row per invocation is in several files (one per block of runs).
    for (const part of table.files) {
      await db.registerFileURL(part.file, new URL("data/" + part.file, ROOT).href,
                               duckdb.DuckDBDataProtocol.HTTP, false);
    }
    const name = table.name.replace(/"/g, '""');
    const files = table.files.map((part) => "'" + part.file.replace(/'/g, "''") + "'");
    await connection.query(`CREATE VIEW "${name}" AS SELECT * FROM read_parquet([${files.join(", ")}])`);
  }
  return [connection, manifest];
}

function plain(value) {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "object") return JSON.stringify(value, (k, v) => typeof v === "bigint" ? Number(v) : v);
  return value;
}

function fieldValue(field, value) {
  const type = String(field.type);
  if (value !== null && /^Timestamp|^Date/.test(type) && typeof value === "number") {
    // UTC, as the store keeps it; a form plotly reads as a date axis.
    return new Date(value).toISOString().replace("T", " ").slice(0, 19);
  }
  return plain(value);
}

function toRows(table) {
  const fields = table.schema.fields;
  const rows = [];
  for (const row of table) {
    rows.push(fields.map((field) => fieldValue(field, row[field.name])));
  }
  return { columns: fields.map((field) => field.name), rows: rows };
}

function cellText(value) {
  if (value === null) return "–";
  if (typeof value === "number") {
    return Number.isInteger(value) ? value.toLocaleString("en-US")
      : value.toLocaleString("en-US", { maximumFractionDigits: 3 });
  }
  return String(value);
}

function runHref(runId) {
  return state.runPages[runId] || "runs/index.html";
}

function renderTable(result) {
  const holder = document.getElementById("tm-sql-result");
  holder.textContent = "";
  const runColumn = result.columns.indexOf("run_id");
  const table = element("table");  // no class: Material styles class-less tables
  const head = table.createTHead().insertRow();
  result.columns.forEach((name) => head.appendChild(element("th", name)));
  const body = table.createTBody();
  result.rows.slice(0, SHOWN_ROWS).forEach((row) => {
    const tr = body.insertRow();
    const href = runColumn >= 0 && row[runColumn] ? runHref(String(row[runColumn])) : null;
    row.forEach((value) => {
      const td = tr.insertCell();
      if (href && value !== null) td.appendChild(element("a", cellText(value), { href: href }));
      else td.textContent = cellText(value);
      if (typeof value === "number") td.className = "tm-number";
    });
  });
  holder.appendChild(table);
  const more = result.rows.length > SHOWN_ROWS ? ` (the first ${SHOWN_ROWS} shown)` : "";
  const link = element("a", "Download the result as CSV", { href: "#", class: "tm-sql-csv" });
  link.addEventListener("click", (event) => { event.preventDefault(); downloadCsv(result); });
  const line = element("p", `${result.rows.length.toLocaleString("en-US")} rows${more}. `);
  line.appendChild(link);
  holder.insertBefore(line, table);
}

function csvField(value) {
  if (value === null) return "";
  const text = String(value);
  return /[",\n\r]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
}

function downloadCsv(result) {
  const lines = [result.columns.map(csvField).join(",")]
    .concat(result.rows.map((row) => row.map(csvField).join(",")));
  const blob = new Blob([lines.join("\n") + "\n"], { type: "text/csv" });
  const link = element("a", null, { href: URL.createObjectURL(blob), download: "query.csv" });
  document.body.appendChild(link);
  link.click();
  link.remove();
}

function numericColumns(result) {
  return result.columns.map((_, i) => i).filter((i) => result.rows.length > 0 &&
    result.rows.every((row) => row[i] === null || typeof row[i] === "number"));
}

function drawChart(result, xi, yi) {
  const holder = document.getElementById("tm-sql-chart");
  if (holder.data) window.Plotly.purge(holder);
  holder.textContent = "";
  if (!window.Plotly || yi < 0 || result.rows.length < 1) return;
  const x = result.rows.map((row) => row[xi]);
  const categorical = x.some((value) => typeof value === "string" && isNaN(Date.parse(value)));
  window.Plotly.newPlot(holder, [{
    x: x, y: result.rows.map((row) => row[yi]), name: result.columns[yi],
    type: categorical ? "bar" : "scatter", mode: "lines+markers",
  }], {
    height: 360, margin: { t: 20, r: 20, b: 110, l: 80 },
    xaxis: { title: { text: result.columns[xi] }, automargin: true },
    yaxis: { title: { text: result.columns[yi] }, automargin: true },
  }, { responsive: true, displaylogo: false });
}

function columnPicker(label, result, choices, chosen, onChange) {
  const select = element("select");
  choices.forEach((i) => select.appendChild(element("option", result.columns[i], { value: String(i) })));
  select.value = String(chosen);
  select.addEventListener("change", onChange);
  const wrapper = element("label", label + " ");
  wrapper.appendChild(select);
  return [wrapper, select];
}

function renderChart(result) {
  // A chart of one column against another: x the first column, y the first column of
  // non-whole numbers (a median rather than a count), both changeable.
  const controls = document.getElementById("tm-sql-chart-controls");
  controls.textContent = "";
  const numeric = numericColumns(result).filter((i) => i > 0);
  if (numeric.length === 0) { drawChart(result, 0, -1); return; }
  const fractional = numeric.find((i) => result.rows.some((row) => row[i] !== null && !Number.isInteger(row[i])));
  const all = result.columns.map((_, i) => i);
  const redraw = () => drawChart(result, Number(xSelect.value), Number(ySelect.value));
  const [xLabel, xSelect] = columnPicker("Chart: x", result, all, 0, redraw);
  const [yLabel, ySelect] = columnPicker(" y", result, numeric, fractional === undefined ? numeric[0] : fractional, redraw);
  controls.append(xLabel, yLabel);
  redraw();
}

async function runQuery() {
  if (!state.connection) return;
  const sql = document.getElementById("tm-sql-query").value;
  say("Running…");
  const began = performance.now();
  try {
    const result = toRows(await state.connection.query(sql));
    state.result = result;
    renderTable(result);
    renderChart(result);
    say(`Done in ${((performance.now() - began) / 1000).toFixed(2)} s.`);
  } catch (error) {
    say(String(error.message || error), true);
  }
}

function chooseExample() {
  const index = Number(document.getElementById("tm-sql-example").value);
  const examples = document.querySelectorAll("template.tm-sql-example");
  document.getElementById("tm-sql-query").value = examples[index].content.textContent.trim() ||
    examples[index].innerHTML.trim();
}

async function start() {
  const root = document.querySelector(".tm-sql");
  if (!root) return;
  document.getElementById("tm-sql-example").addEventListener("change", chooseExample);
  document.getElementById("tm-sql-run").addEventListener("click", runQuery);
  if (root.dataset.available !== "yes") {
    say("DuckDB-WASM is not part of this site (see above).", true);
    return;
  }
  if (location.protocol === "file:") {
    say("Opened from disk: serve the site over HTTP to run queries (see above).", true);
    return;
  }
  try {
    const [connection, manifest] = await openDatabase();
    state.connection = connection;
    state.runPages = manifest.run_pages || {};
    say(`Ready: ${manifest.tables.length} tables, schema version ${manifest.schema_version}.`);
    root.dataset.ready = "yes";
  } catch (error) {
    say("DuckDB-WASM could not start: " + String(error.message || error), true);
  }
}

start();
