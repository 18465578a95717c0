/* The Compare page: pick a baseline and a candidate run; the page shows the verdicts the
   analysis core gave that pair when the site was built (compare/<pair>.json, written by
   reports/build/compare_site.py), never its own. The choice lives in the address
   (#base=RUN&cand=RUN), so a comparison is a link. Every number links to its run. */
(function () {
  "use strict";

  // The columns of `tidemark compare`, the verdict first, folded to fit a 1,400 px window.
  const COLUMNS = ["Series · metric", "Verdict", "Change", "95% CI", "Baseline median",
                   "Candidate median", "p (test)", "Threshold"];

  function element(tag, text, attrs) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = text;
    Object.entries(attrs || {}).forEach(([key, value]) => node.setAttribute(key, value));
    return node;
  }

  function link(text, href) { return element("a", text, { href: href }); }

  function runText(run) {
    return [run.id, run.started, run.engine, run.label].filter(Boolean).join(" · ");
  }

  function command(base, cand) {
    const line = element("p", "On the command line: ");
    line.appendChild(element("code", `tidemark compare ${base} ${cand}`));
    return line;
  }

  function sideLine(title, run) {
    const line = element("p");
    line.appendChild(element("strong", title + " "));
    line.appendChild(link(run.run_id, run.href));
    const facts = [`${run.engine} ${run.engine_version}`, run.build_variant, run.label,
                   run.started, run.status].filter(Boolean).join(" · ");
    line.append(" — " + facts);
    return line;
  }

  function median(side) {
    const cell = element("td", null, { class: "tm-number" });
    cell.appendChild(link(side.text, side.href));
    cell.append(` (n=${side.n})`);
    return cell;
  }

  function csvField(value) {
    const text = value === null || value === undefined ? "" : String(value);
    return /[",\n\r]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }

  function csvLink(pair) {
    const header = ["series", "series_key", "metric", "baseline_median", "baseline_n",
                    "baseline_link", "candidate_median", "candidate_n", "candidate_link",
                    "change_pct", "ci_95", "p", "test", "threshold", "verdict"];
    const rows = pair.rows.map((r) => [r.series, r.series_key, r.metric, r.base.value, r.base.n,
      r.base.href, r.cand.value, r.cand.n, r.cand.href, r.change_pct, r.ci, r.p, r.test,
      r.threshold, r.verdict]);
    const text = [header].concat(rows).map((row) => row.map(csvField).join(",")).join("\n") + "\n";
    const anchor = link("Download this table as CSV",
                        URL.createObjectURL(new Blob([text], { type: "text/csv" })));
    anchor.setAttribute("download", `compare-${pair.base}-${pair.cand}.csv`);
    const line = element("p", null, { class: "tm-csv" });
    line.appendChild(anchor);
    return line;
  }

  function verdictTable(pair) {
    const table = element("table");  // no class: Material styles class-less tables
    const head = table.createTHead().insertRow();
    COLUMNS.forEach((name) => head.appendChild(element("th", name)));
    const body = table.createTBody();
    pair.rows.forEach((r) => {
      const tr = body.insertRow();
      tr.dataset.seriesKey = r.series_key;
      tr.dataset.metric = r.metric;
      const series = element("td", r.series, { title: r.label });
      series.appendChild(element("br"));
      series.appendChild(element("small", r.metric));
      const verdict = element("td", r.verdict, { class: "tm-verdict" });
      verdict.dataset.verdict = r.verdict;
      tr.append(series, verdict);
      [r.change, r.ci].forEach((text) => tr.appendChild(element("td", text, { class: "tm-number" })));
      tr.append(median(r.base), median(r.cand));
      tr.appendChild(element("td", `${r.p} (${r.test})`, { class: "tm-number" }));
      tr.appendChild(element("td", r.threshold, { class: "tm-number" }));
    });
    return table;
  }

  function showPair(out, pair) {
    if (pair.problem) {
      out.appendChild(element("p", "These runs could not be compared: " + pair.problem,
                              { class: "tm-error" }));
      out.appendChild(command(pair.base, pair.cand));
      return;
    }
    out.appendChild(sideLine("Baseline", pair.base_run));
    out.appendChild(sideLine("Candidate", pair.cand_run));
    out.appendChild(element("p", pair.headline, { class: "tm-headline" }));
    if (pair.footer.length) {
      const list = element("ul", null, { class: "tm-differences" });
      pair.footer.forEach((line) => list.appendChild(element("li", line)));
      out.appendChild(element("p", "Differences named, and notes:"));
      out.appendChild(list);
    }
    const scroll = element("div", null, { class: "tm-scroll" });  // never wider than the page
    scroll.appendChild(verdictTable(pair));
    out.appendChild(scroll);
    out.appendChild(csvLink(pair));
    out.appendChild(command(pair.base, pair.cand));
  }

  function notComputed(out, index, base, cand, swap) {
    out.appendChild(element("p", "This pair was not compared when the site was built (see " +
                            "“What is covered” above); this command compares it:",
                            { class: "tm-not-computed" }));
    out.appendChild(command(base, cand));
    if (index.files.has(base + "\n" + cand) || !index.files.has(cand + "\n" + base)) return;
    const line = element("p", "The same two runs the other way round were compared: ");
    const other = link("swap baseline and candidate", "#");
    other.addEventListener("click", (event) => { event.preventDefault(); swap(); });
    line.appendChild(other);
    out.appendChild(line);
  }

  function picker(label, runs) {
    const select = element("select");
    runs.forEach((run) => select.appendChild(element("option", runText(run), { value: run.id })));
    const wrapper = element("label", label + " ");
    wrapper.appendChild(select);
    return [wrapper, select];
  }

  function button(text, onClick) {
    const node = element("button", text, { type: "button" });
    node.addEventListener("click", onClick);
    return node;
  }

  function readHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    return [params.get("base"), params.get("cand")];
  }

  function coverageText(index) {
    return `${index.pairs.length.toLocaleString("en-US")} pairs were compared for this site ` +
      `(${index.comparisons.toLocaleString("en-US")} series comparisons` +
      (index.complete ? "; every pair the rule names)." : "; the budget stopped the older runs).") +
      " ✓ marks a run whose pair with the other choice was compared.";
  }

  /* The two pickers, the buttons and the result; the address holds the pair. */
  class Comparer {
    constructor(root, index) {
      this.root = root;
      this.index = index;
      this.shown = "";
      let baseLabel, candLabel;
      [baseLabel, this.base] = picker("Baseline", index.runs);
      [candLabel, this.cand] = picker("Candidate", index.runs);
      this.out = element("div", null, { class: "tm-compare-result", "aria-live": "polite" });
      const controls = element("div", null, { class: "tm-compare-controls" });
      controls.append(baseLabel, candLabel, button("Swap", () => this.swap()),
                      button("Candidate vs its previous run", () => this.againstPrevious()));
      if (index.baseline) {
        controls.appendChild(button("Candidate vs the configured baseline",
                                    () => this.choose(index.baseline, this.cand.value)));
      }
      root.append(controls, element("p", coverageText(index), { class: "tm-coverage" }), this.out);
      this.base.addEventListener("change", () => this.choose());
      this.cand.addEventListener("change", () => this.choose());
      window.addEventListener("hashchange", () => this.choose(...readHash()));
    }

    open() {
      const [base, cand] = readHash();
      const opening = this.index.opening || [];
      const runs = this.index.runs;
      this.choose(base || opening[0] || (runs[1] || runs[0]).id, cand || opening[1] || runs[0].id);
    }

    mark() {  // ✓ on the runs whose pair with the other side was computed
      const files = this.index.files;
      const label = (o, computed) => { o.textContent = (computed ? "✓ " : "") + runText(this.index.byId.get(o.value)); };
      Array.from(this.cand.options).forEach((o) => label(o, files.has(this.base.value + "\n" + o.value)));
      Array.from(this.base.options).forEach((o) => label(o, files.has(o.value + "\n" + this.cand.value)));
    }

    choose(base, cand) {
      const known = this.index.byId;
      if (base && known.has(base)) this.base.value = base;
      if (cand && known.has(cand)) this.cand.value = cand;
      const hash = new URLSearchParams({ base: this.base.value, cand: this.cand.value }).toString();
      if (location.hash.slice(1) !== hash) history.replaceState(null, "", "#" + hash);
      this.render();
    }

    swap() { this.choose(this.cand.value, this.base.value); }

    againstPrevious() {
      const before = this.index.previous[this.cand.value];
      if (before) { this.choose(before, this.cand.value); return; }
      this.shown = "";
      this.out.textContent = "";
      this.out.appendChild(element("p", "No earlier run measured a series of this run, or it " +
                                   "was not among the runs compared (see “What is covered”)."));
    }

    render() {
      const base = this.base.value;
      const cand = this.cand.value;
      if (this.shown === base + "\n" + cand) return;
      this.shown = base + "\n" + cand;
      this.mark();
      this.out.textContent = "";
      const file = this.index.files.get(this.shown);
      if (base === cand) {
        this.out.appendChild(element("p", "Pick two different runs."));
        this.root.dataset.state = "same";
      } else if (!file) {
        notComputed(this.out, this.index, base, cand, () => this.swap());
        this.root.dataset.state = "not-computed";
      } else {
        this.load(file, this.shown);
      }
    }

    async load(file, pair) {
      this.root.dataset.state = "loading";
      try {
        const response = await fetch(this.index.folder + file);
        if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
        const data = await response.json();
        if (this.shown !== pair) return;  // the reader picked another pair meanwhile
        showPair(this.out, data);
        this.root.dataset.state = data.problem ? "problem" : "shown";
      } catch (error) {
        this.out.appendChild(element("p", `The comparison file ${file} did not load ` +
                                     `(${error.message}).`, { class: "tm-error" }));
        this.root.dataset.state = "error";
      }
    }
  }

  async function start() {
    const root = document.querySelector(".tm-compare");
    if (!root) return;
    try {
      const response = await fetch(root.dataset.index);
      if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
      const index = await response.json();
      index.files = new Map(index.pairs.map(([base, cand, file]) => [base + "\n" + cand, file]));
      index.byId = new Map(index.runs.map((run) => [run.id, run]));
      index.folder = root.dataset.index.replace(/[^/]*$/, "");
      new Comparer(root, index).open();
    } catch (error) {
      root.appendChild(element("p", "The list of compared runs did not load (" + error.message +
        "). Serve the site over HTTP (e.g. python3 -m http.server in the site folder); " +
        "browsers do not let a page opened from disk load files.", { class: "tm-error" }));
    }
  }

  document.addEventListener("DOMContentLoaded", start);
})();
