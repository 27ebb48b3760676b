// The page of `taluva serve` (docs/web.md): replay, play, analysis, tournament runs.
// No build step, no libraries.
"use strict";

const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";
const MODES = ["replay", "play", "runs"];
const view = { mode: null, path: null, positions: 0, ply: 0, token: 0 };
// review: the ply looked at in a game in play (null: the game as it is now, live)
const play = { game: null, selected: null, turn: 0, busy: false, review: null, token: 0 };
const runs = { path: null };
let applied = null;  // the address (hash) the page shows
let analysisCtl = null;  // the running position analysis: { id, cancel }
const graph = { job: null, res: null };  // the value graph of the open record
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

function showMessage(text) {
  const box = $("message");
  box.textContent = text || "";
  box.hidden = !text;
}

// A JSON route; a non-2xx answer is {"error": "..."}: thrown as its one line.
async function api(url, body, signal) {
  const opts = body === undefined ? { signal } : {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body), signal };
  const resp = await fetch(url, opts);
  let data = null;
  try { data = await resp.json(); } catch (e) { data = null; }
  if (!resp.ok) throw new Error((data && data.error) || `${resp.status} ${resp.statusText}`);
  return data;
}

// -- the board: server SVG, inlined so marks can be drawn over it ---------------------------

// The picture's panel (seats, tile in hand, last action, legend) is moved out of the SVG into
// the HTML panel beside it, so its text keeps its size however large the board grows; the
// SVG keeps the board alone, fitted to its box, zoomed and panned by the page (below).
function setBoard(svgText) {
  const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
  const svg = document.importNode(doc.documentElement, true);
  const box = $("board");
  const panel = svg.querySelector("g.panel");
  $("panel").replaceChildren(...(panel ? panelHtml(panel) : []));
  $("panel").hidden = !panel;
  if (panel) panel.remove();
  const bg = svg.querySelector(":scope > rect");
  if (bg && bg.getAttribute("width") === (svg.getAttribute("viewBox") || "").split(" ")[2]) {
    box.style.background = bg.getAttribute("fill") || "";
    bg.remove();
  }
  svg.dataset.full = svg.getAttribute("viewBox") || "";
  svg.removeAttribute("width");
  svg.removeAttribute("height");
  const empty = [...svg.querySelectorAll(":scope > text")].find((t) => t.textContent === "empty table");
  if (empty) {  // said above the first spot (0,0), not over it
    empty.setAttribute("y", "-50");
    empty.setAttribute("class", "empty-table");
  }
  box.replaceChildren(svg);
  shadeLevels(svg);
  fitBoard();
  box.classList.remove("fresh");
  void box.offsetWidth;  // restart the short fade-in of a new position
  box.classList.add("fresh");
  return svg;
}

// -- the panel beside the board, in HTML --------------------------------------------------

const attr = (el, name) => el.getAttribute(name) || "";

// A small inline SVG holding copies of `nodes`, its view box `box` ([x, y, w, h]).
function miniSvg(nodes, box, cls) {
  const svg = document.createElementNS(SVGNS, "svg");
  svg.setAttribute("viewBox", box.join(" "));
  svg.setAttribute("class", cls);
  for (const n of nodes) svg.appendChild(n.cloneNode(true));
  return svg;
}

function pointsBox(g) {
  const xs = [], ys = [];
  for (const p of g.querySelectorAll("polygon")) {
    for (const pair of attr(p, "points").trim().split(/\s+/)) {
      const [x, y] = pair.split(",").map(Number);
      xs.push(x); ys.push(y);
    }
  }
  if (!xs.length) return [0, 0, 10, 10];
  const x0 = Math.min(...xs), y0 = Math.min(...ys);
  return [x0 - 2, y0 - 2, Math.max(...xs) - x0 + 4, Math.max(...ys) - y0 + 4];
}

// The SVG panel's rows as HTML: its title and lines (their colour kept), a row per seat (its
// colour as a swatch, its lines), the tile in hand as a small picture, the legend's symbols.
function panelHtml(panel) {
  const out = [];
  const div = (cls, text) => {
    const d = document.createElement("div");
    if (cls) d.className = cls;
    if (text !== undefined) d.textContent = text;
    return d;
  };
  for (const child of panel.children) {
    const tag = child.tagName.toLowerCase();
    const cls = attr(child, "class");
    if (tag === "text") {
      const d = div("line " + cls, child.textContent);
      if (attr(child, "font-weight") === "bold") d.classList.add("title");
      const fill = attr(child, "fill");
      if (fill && fill !== "#000" && fill !== "#000000") d.style.color = fill;
      if (child.textContent.startsWith("last:")) d.classList.add("last");
      out.push(d);
    } else if (cls.split(" ").includes("seat-row")) {
      const row = div("seat-row");
      row.dataset.seat = attr(child, "data-seat");
      const sw = document.createElement("span");
      sw.className = "swatch";
      const rect = child.querySelector("rect");
      sw.style.background = rect ? attr(rect, "fill") : "#888";
      const texts = [...child.querySelectorAll("text")];
      const body = div("seat-lines");
      texts.forEach((t, i) => body.appendChild(div(i === 0 ? "seat-name" : "seat-small", t.textContent)));
      if (texts[0] && texts[0].textContent.startsWith("▶")) row.classList.add("to-move");
      row.append(sw, body);
      out.push(row);
    } else if (cls.split(" ").includes("in-hand")) {
      const pic = miniSvg([...child.children], pointsBox(child), "in-hand");
      pic.dataset.tile = attr(child, "data-tile");
      (out.length ? out[out.length - 1] : out[out.push(div("line")) - 1]).appendChild(pic);
    } else if (cls.split(" ").includes("legend")) {
      const legend = div("legend");
      for (const item of child.children) {
        const label = [...item.children].filter((e) => e.tagName.toLowerCase() === "text").pop();
        const symbols = [...item.children].filter((e) => e !== label);
        const entry = div("legend-item");
        entry.append(miniSvg(symbols, [-1, -1, 14, 14], "symbol"), label ? label.textContent : "");
        legend.appendChild(entry);
      }
      out.push(legend);
    }
  }
  return out;
}

// A solo game's running score, the score to beat, the score by line and the counters, at
// the top of the panel.
function drawNotes(notes) {
  const solo = notes && notes.solo;
  if (!solo) return;
  const box = document.createElement("div");
  box.className = "solo";
  box.id = "solo-score";
  const head = document.createElement("div");
  head.className = "score";
  head.textContent = `score ${solo.score}${solo.final ? " (final)" : " so far"}: ${solo.band}`;
  const beat = document.createElement("div");
  beat.className = "to-beat";
  beat.textContent = solo.to_beat === null ? "the best band reached" :
    `to beat: ${solo.to_beat} (${solo.band === "lost" ? "a win" : solo.next.band})` +
    (solo.final ? `: ${solo.to_beat - solo.score} short` : `, ${solo.to_beat - solo.score} to go`);
  box.append(head, beat);
  if (solo.lines.length) {
    const det = document.createElement("details");
    const sum = document.createElement("summary");
    sum.textContent = "the score by line";
    const table = document.createElement("table");
    for (const l of solo.lines) {
      const tr = document.createElement("tr");
      const a = document.createElement("td");
      a.textContent = l.text;
      const b = document.createElement("td");
      b.textContent = (l.points > 0 ? "+" : "") + l.points;
      tr.append(a, b);
      table.appendChild(tr);
    }
    det.append(sum, table);
    box.appendChild(det);
  }
  const c = solo.counts || {};
  const counts = document.createElement("div");
  counts.className = "seat-small";
  const boxed = c.boxed ? `${c.boxed.huts}/${c.boxed.temples}/${c.boxed.towers}` : "-";
  counts.textContent = `draw pile ${c.draw_pile} · bonus stack ${c.bonus_stack} · face-up ${c.face_up || "-"}` +
    ` · set aside ${c.set_aside} · boxed (huts/temples/towers) ${boxed}`;
  box.appendChild(counts);
  $("panel").prepend(box);
  $("panel").hidden = false;
}

// -- heights, zoom and pan ------------------------------------------------------------------

// Levels shaded: a hex is lighter the higher it stands, with a ring per level above the
// first (contour lines), drawn under the pieces and numbers.
function shadeLevels(svg) {
  const hexes = [...svg.querySelectorAll("polygon.hex[data-level]")];
  if (!hexes.length) return;
  const g = document.createElementNS(SVGNS, "g");
  g.setAttribute("class", "levels");
  const R = (play.game && play.game.hex_radius) || 30;
  for (const h of hexes) {
    const lv = Number(attr(h, "data-level"));
    h.classList.add("lv" + Math.min(lv, 4));
    if (lv < 2) continue;
    const [x, y] = pointsBox(h).map((v, i, a) => (i < 2 ? v + a[i + 2] / 2 : v));
    for (let k = 1; k < Math.min(lv, 5); k++) hexagon(g, [x, y], R * (0.9 - 0.12 * k), "level-ring");
  }
  hexes[hexes.length - 1].after(g);
}

// The board's view box: the whole board fitted (null), or a part of it zoomed in.
let zoomBox = null;

function contentBox(svg) {
  try {
    const b = svg.getBBox();
    if (b.width > 0 && b.height > 0) {
      const pad = 12;
      const w = Math.max(b.width + 2 * pad, 240), h = Math.max(b.height + 2 * pad, 240);
      return [b.x + b.width / 2 - w / 2, b.y + b.height / 2 - h / 2, w, h];
    }
  } catch (e) { /* not rendered */ }
  return (svg.dataset.full || "0 0 100 100").split(" ").map(Number);
}

// Fit the board (its content, marks included) to its box, or show the zoomed part.
function fitBoard() {
  const svg = boardSvg();
  if (!svg) return;
  const box = zoomBox || contentBox(svg);
  svg.setAttribute("viewBox", box.map((v) => v.toFixed(1)).join(" "));
  $("board").classList.toggle("zoomed", zoomBox !== null);
}

function zoomBy(factor, cx, cy) {
  const svg = boardSvg();
  if (!svg) return;
  const [x, y, w, h] = (svg.getAttribute("viewBox") || "0 0 100 100").split(" ").map(Number);
  const full = contentBox(svg);
  const nw = Math.min(Math.max(w * factor, 60), full[2] * 4), nh = nw * h / w;
  if (cx === undefined) { cx = x + w / 2; cy = y + h / 2; }
  zoomBox = [cx - (cx - x) * nw / w, cy - (cy - y) * nh / h, nw, nh];
  if (nw >= full[2] && factor > 1) zoomBox = null;  // zoomed out past the whole board: fit
  fitBoard();
}

function resetZoom() { zoomBox = null; fitBoard(); }

// A point of the page in the board's coordinates.
function boardPoint(svg, clientX, clientY) {
  const m = svg.getScreenCTM();
  if (!m) return null;
  return new DOMPoint(clientX, clientY).matrixTransform(m.inverse());
}

const drag = { on: false, moved: false, x: 0, y: 0, box: null };

function wireZoom() {
  const board = $("board");
  board.addEventListener("wheel", (ev) => {
    const svg = boardSvg();
    if (!svg) return;
    ev.preventDefault();
    const p = boardPoint(svg, ev.clientX, ev.clientY);
    zoomBy(Math.pow(1.15, ev.deltaY / 100), p ? p.x : undefined, p ? p.y : undefined);
  }, { passive: false });
  board.addEventListener("pointerdown", (ev) => {
    const svg = boardSvg();
    if (!svg || ev.button !== 0) return;
    drag.on = true; drag.moved = false; drag.x = ev.clientX; drag.y = ev.clientY;
    drag.box = (svg.getAttribute("viewBox") || "").split(" ").map(Number);
  });
  window.addEventListener("pointermove", (ev) => {
    const svg = boardSvg();
    if (!drag.on || !svg) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    drag.moved = true;
    const r = svg.getBoundingClientRect();
    const [x, y, w, h] = drag.box;
    const scale = Math.max(w / r.width, h / r.height);
    zoomBox = [x - dx * scale, y - dy * scale, w, h];
    fitBoard();
  });
  window.addEventListener("pointerup", () => { drag.on = false; });
  // a drag is no click: the board's click handlers do not see it
  board.addEventListener("click", (ev) => {
    if (drag.moved) { ev.stopPropagation(); drag.moved = false; }
  }, true);
  $("zoom-in").addEventListener("click", () => zoomBy(1 / 1.3));
  $("zoom-out").addEventListener("click", () => zoomBy(1.3));
  $("zoom-fit").addEventListener("click", resetZoom);
}

function boardSvg() { return $("board").querySelector("svg"); }

function overlay(name) {
  const svg = boardSvg();
  if (!svg) return null;
  let g = svg.querySelector("g." + name);
  if (g) g.remove();
  g = document.createElementNS(SVGNS, "g");
  g.setAttribute("class", name);
  svg.appendChild(g);
  if (!zoomBox) queueMicrotask(fitBoard);  // the marks drawn into it kept in view
  return g;
}

function hexagon(g, at, radius, cls, attrs) {
  const pts = [];
  for (let k = 0; k < 6; k++) {
    const a = Math.PI / 180 * (30 + 60 * k);
    pts.push(`${(at[0] + radius * Math.cos(a)).toFixed(1)},${(at[1] + radius * Math.sin(a)).toFixed(1)}`);
  }
  const p = document.createElementNS(SVGNS, "polygon");
  p.setAttribute("points", pts.join(" "));
  p.setAttribute("class", cls);
  for (const [k, v] of Object.entries(attrs || {})) p.setAttribute(k, v);
  g.appendChild(p);
  return p;
}

function label(g, at, text, cls) {
  const t = document.createElementNS(SVGNS, "text");
  t.setAttribute("x", at[0].toFixed(1));
  t.setAttribute("y", (at[1] + 4).toFixed(1));
  t.setAttribute("class", cls);
  t.setAttribute("text-anchor", "middle");
  t.textContent = text;
  g.appendChild(t);
}

// -- views ------------------------------------------------------------------------------------

// The view is named by the address's hash, so a reload, back, forward or a shared link shows
// it again: #replay/<record path>/<ply>, #play/<game id>/<ply>, #runs/<run path> (docs/web.md).

const segs = (path) => path.split("/").map(encodeURIComponent).join("/");

function hashOf(mode) {
  if (mode === "replay") return view.path !== null ? `#replay/${segs(view.path)}/${view.ply}` : "#replay";
  if (mode === "play") {
    if (!play.game) return "#play";
    return `#play/${encodeURIComponent(play.game.id)}/${play.review === null ? play.game.ply : play.review}`;
  }
  return runs.path !== null ? `#runs/${segs(runs.path)}` : "#runs";
}

// Write the view into the address: a new history entry (push) or in place (a step, or an
// address that named no record, game or run: "#play" before a game starts).
function setHash(push) {
  const hash = hashOf(view.mode);
  if (location.hash !== hash || location.search) {
    if (MODES.includes(location.hash.slice(1))) push = false;
    const url = location.pathname + hash;
    if (push) history.pushState(null, "", url); else history.replaceState(null, "", url);
  }
  applied = location.hash;
}

function parseHash(hash) {
  let parts;
  try { parts = hash.replace(/^#/, "").split("/").map(decodeURIComponent); } catch (e) { parts = [""]; }
  const mode = MODES.includes(parts[0]) ? parts[0] : "replay";
  const rest = parts.slice(1);
  const num = (t) => (t !== undefined && /^[0-9]{1,9}$/.test(t) ? Number(t) : null);
  if (mode === "replay") {
    let ply = null;
    if (rest.length > 1 && num(rest[rest.length - 1]) !== null) ply = num(rest.pop());
    return { mode, record: rest.join("/") || null, ply };
  }
  if (mode === "play") return { mode, game: rest[0] || null, ply: num(rest[1]) };
  return { mode, run: rest.join("/") || null };
}

// Show what the address names (at load, and on hashchange / popstate).
async function route() {
  applied = location.hash;
  const r = parseHash(location.hash);
  showMode(r.mode);
  if (r.mode === "replay") {
    if (r.record === null) {
      if (view.path !== null) { go(view.ply); setHash(false); } else showIndex();
    } else if (r.record !== view.path) {
      await openRecord(r.record, r.ply || 0);
    } else {
      go(r.ply === null ? view.ply : r.ply);
    }
  } else if (r.mode === "play") {
    if (r.game === null) {
      if (play.game) { play.review = null; renderGame(play.game); advance(); }
    } else if (!play.game || play.game.id !== r.game) {
      await loadGame(r.game, r.ply);
    } else {
      lookAt(r.ply);
      advance();
    }
  } else {
    await loadRuns(r.run);
  }
}

function showMode(mode) {
  if (view.mode === mode) return;
  view.mode = mode;
  document.body.dataset.mode = mode;
  for (const b of document.querySelectorAll(".tab")) b.classList.toggle("active", b.dataset.view === mode);
  clearAnalysis();
  zoomBox = null;
  $("board").replaceChildren();
  $("panel").replaceChildren();
  $("panel").hidden = true;
  $("moves").replaceChildren();
  $("graph").replaceChildren();
  $("graph").hidden = true;
  showMessage("");
}

function setMode(mode) {
  location.hash = "#" + mode;  // route() shows it (the open record, game or run kept)
}

// -- replay -----------------------------------------------------------------------------------

async function loadList() {
  try {
    const data = await api("/api/records");
    $("dirs").textContent = "serving: " + data.dirs.join(", ");
    const picker = $("picker");
    while (picker.options.length > 1) picker.remove(1);
    const rows = $("records").tBodies[0];
    rows.replaceChildren();
    for (const rec of data.records) {
      const opt = document.createElement("option");
      opt.value = rec.path;
      opt.textContent = rec.name;
      opt.title = `${rec.dir}/${rec.name}: ${rec.players.join(" vs ")}; ${rec.result}`;
      picker.appendChild(opt);
      const tr = document.createElement("tr");
      const a = document.createElement("a");
      a.href = `#replay/${segs(rec.path)}/0`;
      a.textContent = rec.name;
      const cells = [a, rec.game, rec.players.join(", "), rec.result];
      for (const c of cells) {
        const td = document.createElement("td");
        td.append(c);
        tr.appendChild(td);
      }
      rows.appendChild(tr);
    }
    $("index-title").textContent = `Game records (${data.records.length}) under ${data.dirs.join(", ")}`;
    if (!data.records.length) showMessage("no game records (*.jsonl) under the served directories");
    if (view.path !== null) picker.value = view.path;
  } catch (e) {
    showMessage("cannot list the records: " + e.message);
  }
}

function closeRecord() {
  zoomBox = null;
  view.moves = [];
  document.body.classList.add("no-record");
  clearAnalysis();
  clearGraph();
  view.path = null;
  view.ply = 0;
  $("moves").replaceChildren();
  $("info").textContent = "";
  $("board").replaceChildren();
  $("where").textContent = "";
}

// The records' index, shown in the replay view while no record is open.
function showIndex() {
  closeRecord();
  $("picker").value = "";
}

async function openRecord(path, ply) {
  showMessage("");
  closeRecord();
  if (!path) return;
  const token = ++view.token;
  try {
    const rec = await api("/api/record?path=" + encodeURIComponent(path));
    // another record was asked for meanwhile, or another view is shown now (its move list and
    // board are that view's)
    if (token !== view.token || view.mode !== "replay") return;
    view.path = rec.path;
    view.positions = rec.positions;
    view.seatColours = rec.seat_colours;
    view.moves = rec.moves;
    document.body.classList.remove("no-record");
    $("picker").value = rec.path;
    const lines = [`game: ${rec.game}`, "players: " + rec.players.map((p, i) => `${i}: ${p}`).join(", "),
                   `result: ${rec.result}`];
    for (const line of lines) {
      const div = document.createElement("div");
      div.textContent = line;
      $("info").appendChild(div);
    }
    fillMoves(rec.moves, (i) => go(i + 1));
    $("slider").max = String(rec.positions - 1);
    go(Math.min(ply || 0, rec.positions - 1));
  } catch (e) {
    if (token === view.token && view.mode === "replay") showMessage(e.message);
  }
}

// Bring a move of the list into view by scrolling the list alone (never the page, whose
// controls stay where they are).
function scrollToItem(li) {
  const list = li.parentElement;
  const top = li.offsetTop - list.offsetTop, bottom = top + li.offsetHeight;
  if (top < list.scrollTop) list.scrollTop = top;
  else if (bottom > list.scrollTop + list.clientHeight) list.scrollTop = bottom - list.clientHeight;
}

function fillMoves(moves, onClick) {
  const list = $("moves");
  list.replaceChildren();
  moves.forEach((m, i) => {
    const li = document.createElement("li");
    li.textContent = (m.player === "chance" ? "" : `P${m.player} `) + m.notation;
    if (m.help) li.title = m.help;
    if (m.player === "chance") li.className = "chance";
    if (onClick) li.addEventListener("click", () => onClick(i));
    list.appendChild(li);
  });
}

async function go(ply) {
  if (view.path === null || view.mode !== "replay") return;
  ply = Math.max(0, Math.min(view.positions - 1, ply));
  view.ply = ply;
  setHash(false);
  $("slider").value = String(ply);
  $("where").textContent = `position ${ply} / ${view.positions - 1}`;
  const items = $("moves").children;
  for (let i = 0; i < items.length; i++) items[i].classList.toggle("current", i + 1 === ply);
  if (ply > 0 && items[ply - 1]) scrollToItem(items[ply - 1]);
  clearAnalysis();
  markGraph();
  await redrawReplay();
}

// A record's position where a chance draw is to be made (a tile, a card), not a seat.
const isChance = (k) => !!(view.moves && view.moves[k] && view.moves[k].player === "chance");

// The next position, forward (1) or back (-1), over the draws when "step over draws" is on.
function step(dir) {
  let k = view.ply + dir;
  if ($("skip-draws").checked) while (k > 0 && k < view.positions - 1 && isChance(k)) k += dir;
  go(k);
}

// The first position from `k` on where a seat is to move (null: none).
function nextDecision(k) {
  while (k < view.positions - 1 && isChance(k)) k++;
  return k < view.positions - 1 ? k : null;
}

// The board of the record's position shown (an analysis of it drawn again).
async function redrawReplay() {
  const ply = view.ply;
  const token = ++view.token;
  try {
    const pos = await api(`/api/position?path=${encodeURIComponent(view.path)}&ply=${ply}`);
    // a later step superseded this one, or another view is shown now (back, then forward to a
    // game before this answer came)
    if (token !== view.token || view.mode !== "replay") return;
    setBoard(pos.svg);
    drawNotes(pos.notes);
    $("board").dataset.ply = String(ply);
    if (analysed) drawHeat(analysed.res);
    showMessage("");
  } catch (e) {
    if (token === view.token && view.mode === "replay") showMessage(e.message);
  }
}

// -- play -------------------------------------------------------------------------------------

async function startGame() {
  showMessage("");
  const seats = [...document.querySelectorAll("#ng-seats .seat")].map((i) => i.value.trim()).filter((s) => s);
  let rules = {};
  const more = $("ng-rules").value.trim();
  if (more) {
    try { rules = JSON.parse(more); } catch (e) { showMessage("rule options: not JSON: " + e.message); return; }
  }
  if ($("ng-tiles").value) rules.tiles_per_player = Number($("ng-tiles").value);
  const body = { game: $("ng-game").value, seats, rules };
  if ($("ng-seed").value !== "") body.seed = Number($("ng-seed").value);
  try {
    const g = await api("/api/games", body);
    play.turn++;
    play.review = null;
    play.game = g;
    zoomBox = null;
    $("new-game").open = false;
    setHash(true);
    renderGame(g);
    advance();
  } catch (e) {
    showMessage(e.message);
  }
}

// A game of the server's memory, by its id (an address of the Play view).
async function loadGame(id, ply) {
  showMessage("");
  play.turn++;
  try {
    const g = await api("/api/games/" + encodeURIComponent(id));
    zoomBox = null;
    $("new-game").open = false;
    play.review = ply !== null && ply < g.ply ? ply : null;
    play.game = g;
    renderGame(g);
    advance();
  } catch (e) {
    play.game = null;
    $("board").replaceChildren();
    $("turn").textContent = "";
    showMessage(`game ${id}: ${e.message}`);
  }
}

// Look at the game in play as it was after `ply` actions (null or its ply: as it is now).
async function lookAt(ply) {
  const g = play.game;
  if (!g) return;
  play.review = ply === null || ply >= g.ply ? null : Math.max(0, ply);
  renderGame(g);
}

function renderGame(g) {
  play.game = g;
  play.selected = null;
  if (view.mode !== "play") return;
  if (analysed && analysed.ply !== null && analysed.ply !== g.ply) clearAnalysis();  // stale
  setHash(false);
  const review = play.review;
  const board = $("board");
  if (review === null) {
    setBoard(g.svg);
    drawNotes(g.notes);
    board.dataset.ply = String(g.ply);
  } else {
    const token = ++play.token;
    api(`/api/games/${encodeURIComponent(g.id)}/position?ply=${review}`).then((pos) => {
      if (token !== play.token || play.review !== review || view.mode !== "play") return;
      setBoard(pos.svg);
      drawNotes(pos.notes);
      board.dataset.ply = String(review);
    }).catch((e) => showMessage(e.message));
  }
  board.dataset.over = String(g.over);
  fillMoves(g.history, (i) => lookAt(i + 1));
  const items = $("moves").children;
  const now = review === null ? items.length : review;
  for (let i = 0; i < items.length; i++) items[i].classList.toggle("current", i + 1 === now);
  if (now > 0 && items[now - 1]) scrollToItem(items[now - 1]);
  const who = g.to_move === null ? "" : `seat ${g.to_move} (${g.seats[g.to_move]})`;
  $("turn").textContent = review !== null ? `looking back: position ${review} of ${g.ply} (→ or End: back to the game)` :
    g.over ? "game over" :
    g.human_to_move ? `${who} to play: ${turnHint(g)}` :
    `${who} is thinking…`;
  $("game-over").hidden = !g.over;
  $("saved").textContent = "";
  if (g.over) {
    $("result").textContent = g.result;
    $("download").href = `/api/games/${g.id}/record`;
  }
  $("tile-tools").hidden = true;
  $("build-options").replaceChildren();
  if (g.human_to_move && review === null) drawSpots(g);
  drawAgentStats(g);
  drawPlayGraph(g);
}

function movesAt(g, q, r) {
  return g.moves.filter((m) => m.hex && m.hex[0] === q && m.hex[1] === r);
}

// The moves naming a city of the map (Thurn und Taxis), and the moves that name no place.
const movesAtCity = (g, city) => g.moves.filter((m) => m.city === city);
const placeless = (g) => g.moves.filter((m) => !m.hex && !m.city);

// What the person to move is asked to do: click a marked hex or city, or choose below.
function turnHint(g) {
  const hexes = g.moves.some((m) => m.hex && m.at), cities = g.moves.some((m) => m.city);
  const others = placeless(g).length > 0;
  if (hexes && g.step === "tile") return "click a marked spot to place the tile";
  if (hexes) return "click a marked hex to build" + (others ? ", or choose a move below" : "");
  if (cities) return "click a marked city" + (others ? ", or choose a move below" : "");
  return g.step === "box" ? "choose the piece to put into the box (below)"
    : g.step === "bonus" ? "take a bonus tile or stop (below)" : "choose a move below";
}

function drawSpots(g) {
  const layer = overlay("spots");
  if (!layer) return;
  const seen = new Set();
  for (const m of g.moves) {
    if (!m.hex || !m.at) continue;
    const key = m.hex.join(",");
    if (seen.has(key)) continue;
    seen.add(key);
    const p = hexagon(layer, m.at, g.hex_radius * 0.8, "spot", { "data-q": m.hex[0], "data-r": m.hex[1] });
    const t = document.createElementNS(SVGNS, "title");
    t.textContent = movesAt(g, m.hex[0], m.hex[1]).map((x) => x.notation).join(", ");
    p.appendChild(t);
  }
  for (const m of g.moves) {  // the cities a move names (Thurn und Taxis)
    if (!m.city || !m.at || seen.has(m.city)) continue;
    seen.add(m.city);
    const c = document.createElementNS(SVGNS, "circle");
    c.setAttribute("cx", m.at[0]);
    c.setAttribute("cy", m.at[1]);
    c.setAttribute("r", "27");
    c.setAttribute("class", "spot city-spot");
    c.setAttribute("data-city", m.city);
    const t = document.createElementNS(SVGNS, "title");
    t.textContent = movesAtCity(g, m.city).map((x) => x.notation).join(", ");
    c.appendChild(t);
    layer.appendChild(c);
  }
  const opts = $("build-options");
  if (g.moves.length > 40 && !g.moves.some((m) => m.at)) {  // a game without a picture of places
    const sel = document.createElement("select");
    sel.id = "move-select";
    for (const m of g.moves) {
      const o = document.createElement("option");
      o.value = m.notation;
      o.textContent = m.notation;
      sel.appendChild(o);
    }
    const b = document.createElement("button");
    b.textContent = "Play";
    b.addEventListener("click", () => sendMove(sel.value));
    opts.append(sel, b);
  } else {
    for (const m of placeless(g)) opts.appendChild(moveButton(m));
  }
  showHelp(null);
}

// What a move does, under the buttons (its button's hover or focus), else what the step asks.
function showHelp(m) {
  const g = play.game;
  const box = $("move-help");
  if (m && m.help) { box.textContent = `${m.notation}: ${m.help}`; return; }
  const others = g && g.human_to_move ? placeless(g) : [];
  box.textContent = others.length ? others.map((x) => `${x.notation}: ${x.help || ""}`).join(" · ") : "";
}

function moveButton(m) {
  const b = document.createElement("button");
  b.className = "move";
  b.textContent = m.notation;
  b.dataset.move = m.notation;
  if (m.help) b.title = m.help;
  b.addEventListener("click", () => sendMove(m.notation));
  b.addEventListener("mouseenter", () => { preview(m); showHelp(m); });
  b.addEventListener("focus", () => { preview(m); showHelp(m); });
  b.addEventListener("mouseleave", () => showHelp(null));
  return b;
}

// The search of the last agent's move: its top moves (visits, value, prior), its line.
function drawAgentStats(g) {
  const box = $("agent-stats");
  const st = g.last_stats || {};
  if (st.seat === undefined) { box.hidden = true; box.replaceChildren(); return; }
  box.hidden = false;
  const sign = (v) => (typeof v === "number" ? (v >= 0 ? "+" : "") + v.toFixed(2) : "-");
  const head = document.createElement("div");
  head.className = "stats-head";
  const played = g.history[st.ply] ? g.history[st.ply].notation : "?";
  head.textContent = `seat ${st.seat} (${st.spec}) played ${played}` +
    (st.simulations !== undefined ? `: ${st.simulations} simulations, value ${sign(st.root_value)}` : "");
  box.replaceChildren(head);
  if (st.pv && st.pv.length) {
    const pv = document.createElement("div");
    pv.className = "pv";
    pv.textContent = "line: " + st.pv.join(" ");
    box.appendChild(pv);
  }
  if (st.top && st.top.length) {
    const table = document.createElement("table");
    table.className = "stats-top";
    table.innerHTML = "<tr><th>move</th><th>visits</th><th>value</th><th>prior</th></tr>";
    for (const t of st.top) {
      const tr = document.createElement("tr");
      for (const cell of [t.move, t.visits, sign(t.value), typeof t.prior === "number" ? t.prior.toFixed(2) : "-"]) {
        const td = document.createElement("td");
        td.textContent = String(cell);
        tr.appendChild(td);
      }
      table.appendChild(tr);
    }
    box.appendChild(table);
  }
  if (!st.pv && st.summary && !st.top) {
    const sm = document.createElement("div");
    sm.textContent = st.summary;
    box.appendChild(sm);
  }
}

// A move drawn where it would go: a tile with its terrains, the volcano's facing (a dark wedge,
// as the board draws it) and the levels it makes, in the orientation chosen; a build's pieces
// in the colour of the seat to move; any other move's hexes outlined.
function preview(m) {
  const g = play.game;
  const layer = overlay("preview");
  if (!layer || !m || !g) return;
  const R = g.hex_radius;
  const at = m.cells_at || [];
  const seat = g.to_move === null ? 0 : g.to_move;
  const colour = (g.seat_colours || [])[seat] || "#888";
  const el = (name, attrs) => {
    const e = document.createElementNS(SVGNS, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    layer.appendChild(e);
    return e;
  };
  if (m.kind === "tile" && m.cells_fill) {
    const vol = at.findIndex((p, i) => m.cells[i][0] === m.hex[0] && m.cells[i][1] === m.hex[1]);
    at.forEach((p, i) => {
      hexagon(layer, p, R * 0.97, "preview tile-hex" + (i === vol ? " volcano" : ""),
              { style: `fill: ${m.cells_fill[i]}`, "data-terrain": m.cells_terrain[i],
                "data-q": m.cells[i][0], "data-r": m.cells[i][1] });
      const t = el("text", { x: p[0].toFixed(1), y: (p[1] + 0.78 * R).toFixed(1), class: "preview-level",
                             "text-anchor": "middle" });
      t.textContent = String(m.cells_level[i]);
    });
    if (vol >= 0 && at.length > 1) {
      const mates = at.filter((p, i) => i !== vol);
      const mx = mates.reduce((a, p) => a + p[0], 0) / mates.length;
      const my = mates.reduce((a, p) => a + p[1], 0) / mates.length;
      const [vx, vy] = at[vol];
      const n = Math.hypot(vx - mx, vy - my) || 1;
      const ux = (vx - mx) / n, uy = (vy - my) / n;
      const pt = (a, b) => `${(vx + R * (a * ux - b * uy)).toFixed(1)},${(vy + R * (a * uy + b * ux)).toFixed(1)}`;
      el("polygon", { class: "preview-facing", points: [pt(0.7, 0), pt(0.2, 0.3), pt(0.2, -0.3)].join(" ") });
    }
    return;
  }
  at.forEach((p, i) => {
    hexagon(layer, p, R * 0.92, "preview");
    const lv = m.cells_level ? m.cells_level[i] : 1;
    const [x, y] = p;
    const s = R;
    if (m.kind === "hut" || m.kind === "expand") {
      for (let k = 0; k < lv; k++) {
        const ang = 2 * Math.PI * k / Math.max(lv, 1) - Math.PI / 2;
        const off = lv === 1 ? 0 : 0.24 * s;
        el("circle", { class: "preview-piece", cx: (x + off * Math.cos(ang)).toFixed(1),
                       cy: (y + off * Math.sin(ang)).toFixed(1), r: (0.17 * s).toFixed(1), style: `fill: ${colour}` });
      }
    } else if (m.kind === "temple") {
      el("rect", { class: "preview-piece", x: (x - 0.3 * s).toFixed(1), y: (y - 0.3 * s).toFixed(1),
                   width: (0.6 * s).toFixed(1), height: (0.6 * s).toFixed(1), style: `fill: ${colour}` });
    } else if (m.kind === "tower") {
      el("polygon", { class: "preview-piece", style: `fill: ${colour}`, points:
        `${(x - 0.35 * s).toFixed(1)},${(y + 0.3 * s).toFixed(1)} ${(x + 0.35 * s).toFixed(1)},${(y + 0.3 * s).toFixed(1)} ${x.toFixed(1)},${(y - 0.38 * s).toFixed(1)}` });
    }
  });
}

// The chosen move again (or nothing) once the pointer leaves a spot.
function previewChosen() {
  const s = play.selected;
  if (s) preview(s.moves[s.index]); else overlay("preview");
}

// Hovering a spot of the tile step shows the tile there (in the orientation chosen when the
// spot is the chosen one, else its first legal one).
function boardHover(ev) {
  const g = play.game;
  if (view.mode !== "play" || !g || !g.human_to_move || play.review !== null || g.step !== "tile") return;
  const el = ev.target.closest && ev.target.closest("polygon.spot");
  if (!el) return;
  const q = Number(el.getAttribute("data-q")), r = Number(el.getAttribute("data-r"));
  const s = play.selected;
  if (s && s.q === q && s.r === r) { preview(s.moves[s.index]); return; }
  const here = movesAt(g, q, r);
  if (here.length) preview(here[0]);
}

function boardClick(ev) {
  if (view.mode !== "play" || !play.game || !play.game.human_to_move || play.busy ||
      play.review !== null) return;
  const g = play.game;
  const cityEl = ev.target.closest("[data-city]");
  if (cityEl) { cityClick(g, cityEl.getAttribute("data-city")); return; }
  const el = ev.target.closest("[data-q]");
  if (!el) return;
  const q = Number(el.getAttribute("data-q"));
  const r = Number(el.getAttribute("data-r"));
  const here = movesAt(g, q, r);
  showMessage("");
  if (!here.length) {
    // not a legal spot: the server checks the move and says why (it never reaches the engine)
    const tile = g.moves.find((m) => m.kind === "tile");
    const orient = play.selected ? play.selected.moves[play.selected.index].notation.split(":")[1] : "N";
    sendMove(tile ? `tile@${q},${r}:${orient}` : `hut@${q},${r}`);
    return;
  }
  if (here[0].kind === "tile") {
    play.selected = { q, r, moves: here, index: 0 };
    showChoice();
  } else {
    play.selected = null;
    const opts = $("build-options");
    opts.replaceChildren();
    const lab = document.createElement("span");
    lab.textContent = `on ${q},${r}: `;
    opts.appendChild(lab);
    for (const m of here) opts.appendChild(moveButton(m));
    for (const m of placeless(g)) opts.appendChild(moveButton(m));
    preview(here[0]);
  }
}

// A city of the map clicked: its moves as buttons (with the moves that name no city).
function cityClick(g, city) {
  const here = movesAtCity(g, city);
  showMessage(here.length ? "" : `${city}: no move of this step names it (the marked cities do)`);
  if (!here.length) return;
  const opts = $("build-options");
  opts.replaceChildren();
  const lab = document.createElement("span");
  lab.textContent = `${city}: `;
  opts.appendChild(lab);
  for (const m of here) opts.appendChild(moveButton(m));
  for (const m of placeless(g)) opts.appendChild(moveButton(m));
  showHelp(here.length === 1 ? here[0] : null);
  const layer = overlay("preview");
  if (layer && here[0].at) {
    const c = document.createElementNS(SVGNS, "circle");
    c.setAttribute("cx", here[0].at[0]);
    c.setAttribute("cy", here[0].at[1]);
    c.setAttribute("r", "31");
    c.setAttribute("class", "preview");
    layer.appendChild(c);
  }
}

function showChoice() {
  const s = play.selected;
  if (!s) { $("tile-tools").hidden = true; overlay("preview"); return; }
  const m = s.moves[s.index];
  $("tile-tools").hidden = false;
  const rest = (m.cells_terrain || []).filter((t, i) => m.cells[i][0] !== s.q || m.cells[i][1] !== s.r);
  const level = m.cells_level ? m.cells_level[0] : null;
  $("tile-choice").textContent = `${m.notation}  (${s.index + 1} of ${s.moves.length} ways at ${s.q},${s.r})` +
    (rest.length ? `: volcano facing ${m.notation.split(":")[1]}, ${rest.join(" and ")}` +
     (level ? `, level ${level}` : "") : "");
  preview(m);
}

function rotate(step) {
  const s = play.selected;
  if (!s) return;
  s.index = (s.index + step + s.moves.length) % s.moves.length;
  showChoice();
}

async function sendMove(notation) {
  const g = play.game;
  if (!g || play.busy) return;
  play.busy = true;
  try {
    const next = await api(`/api/games/${g.id}/move`, { move: notation });
    renderGame(next);
    play.busy = false;
    advance();
  } catch (e) {
    play.busy = false;
    showMessage(e.message);
  }
}

// While an agent moves, whether the server compiles the engine's kernels (its first move on a
// fresh install): polled every second, said in the turn line ("compiling its search (first
// use, about N s; M s so far)…") until the returned stop() is called.
function watchCompiling(g) {
  const spec = g.seats[g.to_move];
  const who = `seat ${g.to_move} (${spec})`;
  let stopped = false;
  let shown = false;
  (async () => {
    await sleep(500);
    while (!stopped) {
      try {
        const r = await api(`/api/compiling?agent=${encodeURIComponent(spec)}`);
        if (stopped) return;
        const c = r.compiling;
        if (c) {
          $("turn").textContent = `${who} is thinking… compiling its search (first use, ` +
            `about ${c.about_s} s; ${Math.round(c.seconds)} s so far)…`;
          shown = true;
        } else if (shown) {
          $("turn").textContent = `${who} is thinking…`;
          shown = false;
        }
      } catch (e) {
        return;  // an older server, or none: the plain waiting line stays
      }
      await sleep(1000);
    }
  })();
  return () => { stopped = true; };
}

// The agents move one at a time, each shown for a moment.
// (Another page showing the same game may ask for the same move: a 409 is answered by
// reading the game again.)
async function advance() {
  if (play.advancing === play.turn) return;  // this game's agents are being asked already
  const turn = play.turn;
  play.advancing = turn;
  try {
    while (play.game && !play.game.over && !play.game.human_to_move && turn === play.turn) {
      await sleep(250);
      if (turn !== play.turn || view.mode !== "play") return;
      const id = play.game.id;
      const stop = watchCompiling(play.game);
      try {
        const next = await api(`/api/games/${encodeURIComponent(id)}/agent`, {});
        stop();
        renderGame(next);
      } catch (e) {
        stop();
        if (!/^this game is busy|^seat \d+ is a person|^the game is over/.test(e.message)) {
          showMessage(e.message);
          return;
        }
        await sleep(500);
        if (turn === play.turn) renderGame(await api("/api/games/" + encodeURIComponent(id)));
      }
    }
  } finally {
    if (play.advancing === turn) play.advancing = null;
  }
}

async function saveGame() {
  try {
    const r = await api(`/api/games/${play.game.id}/save`, { dir: 0 });
    const a = document.createElement("a");
    a.href = `#replay/${segs(r.path)}/0`;
    a.id = "saved-link";
    a.textContent = "saved as " + r.path + ": open it in the replay view";
    $("saved").replaceChildren(a);
    loadList();
  } catch (e) {
    showMessage(e.message);
  }
}

// -- analysis ---------------------------------------------------------------------------------

// A running analysis job: DELETE stops the server's search (between its chunks). Like every
// request that changes something, it says application/json (the server refuses other types).
function cancelJob(id) {
  if (id) fetch("/api/analysis/" + encodeURIComponent(id), {
    method: "DELETE", headers: { "Content-Type": "application/json" } }).catch(() => {});
}

function clearAnalysis() {
  if (analysisCtl) cancelJob(analysisCtl.id);
  analysisCtl = null;
  if (line.cand !== null) { line.cand = null; line.token++; $("line-bar").hidden = true; }
  analysed = null;
  $("an-list").replaceChildren();
  $("an-status").textContent = "";
  $("an-run").disabled = false;
  $("an-cancel").disabled = true;
  const svg = boardSvg();
  const g = svg && svg.querySelector("g.analysis");
  if (g) g.remove();
}

function cancelAnalysis() {
  if (!analysisCtl) return;
  analysisCtl.cancel = true;
  cancelJob(analysisCtl.id);
  $("an-cancel").disabled = true;
  $("an-status").textContent += " (cancelling…)";
}

async function runAnalysis() {
  let note = "";
  if (view.mode === "replay" && view.path !== null && isChance(view.ply)) {
    // a draw is to be made here: the position after the draw the game made is analysed
    const from = view.ply, k = nextDecision(from);
    if (k === null) { showMessage("nobody is to move from this position on: nothing to analyse"); return; }
    await go(k);
    note = `position ${from} is a chance draw (${view.moves[from].notation}): stepped to position ${k}, after it. `;
  }
  clearAnalysis();
  showMessage("");
  const body = { agent: $("an-agent").value.trim(), background: true };
  if (view.mode === "play") {
    if (!play.game) { showMessage("start a game first"); return; }
    body.game_id = play.game.id;
  } else {
    if (!view.path) { showMessage("open a record first"); return; }
    body.path = view.path;
    body.ply = view.ply;
  }
  const ctl = { id: null, cancel: false };
  analysisCtl = ctl;
  $("an-run").disabled = true;
  $("an-cancel").disabled = false;
  $("an-status").textContent = "searching…";
  try {
    let job = await api("/api/analysis", body);
    ctl.id = job.id;
    if (analysisCtl !== ctl || ctl.cancel) cancelJob(job.id);
    while (analysisCtl === ctl) {
      if (job.status === "done") {
        drawAnalysis(job.result, job.id);
        if (note) $("an-status").textContent = note + $("an-status").textContent;
        break;
      }
      if (job.status === "cancelled") {
        $("an-status").textContent = `cancelled after ${job.done} simulations`;
        break;
      }
      $("an-status").textContent = (job.compiling && !job.done
        ? `compiling the search (first use, about a minute; ${Math.round(job.compiling.seconds)} s so far)…`
        : `searching… ${job.done}${job.total ? " / " + job.total : ""} simulations`) +
        (job.cancel_requested ? " (cancelling…)" : "");
      await sleep(250);
      if (analysisCtl !== ctl) break;
      job = await api("/api/analysis/" + encodeURIComponent(job.id));
    }
  } catch (e) {
    if (analysisCtl === ctl) {
      $("an-status").textContent = "";
      showMessage("analysis: " + e.message);
    }
  } finally {
    if (analysisCtl === ctl) {
      analysisCtl = null;
      $("an-run").disabled = false;
      $("an-cancel").disabled = true;
    }
  }
}

// -- the value graph: a record's (replay view) or a game's in play --------------------------

// The seats' colours of the record or game shown (the board's; grey when unknown).
function seatColours() {
  const c = view.mode === "play" ? (play.game && play.game.seat_colours) : view.seatColours;
  return c && c.length ? c : ["#1f77b4", "#111111", "#ff8c00", "#8e44ad"];
}

// Dark ink on a light colour, white on a dark one.
function inkOn(colour) {
  const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(colour || "");
  if (!m) return "#000";
  const [r, g, b] = m.slice(1).map((h) => parseInt(h, 16));
  return 0.299 * r + 0.587 * g + 0.114 * b > 140 ? "#000" : "#fff";
}

function clearGraph() {
  if (graph.job) cancelJob(graph.job);
  graph.job = null;
  graph.res = null;
  $("graph").replaceChildren();
  $("graph").hidden = true;
  $("ga-status").textContent = "";
  $("ga-run").disabled = false;
  $("ga-cancel").disabled = true;
}

async function runGameAnalysis() {
  if (!view.path) { showMessage("open a record first"); return; }
  clearGraph();
  showMessage("");
  const body = { agent: $("an-agent").value.trim(), path: view.path };
  $("ga-run").disabled = true;
  $("ga-status").textContent = "starting…";
  let id = null;
  try {
    let job = await api("/api/analysis/game", body);
    id = job.id;
    if (view.path !== body.path) { cancelJob(id); return; }
    graph.job = id;
    $("ga-cancel").disabled = false;
    while (graph.job === id) {
      graph.res = job.result;
      markGraph();
      const state = job.status === "running" ? (job.cancel_requested ? " (cancelling…)" : "…")
        : job.status === "cancelled" ? " (cancelled)" : "";
      $("ga-status").textContent = `${job.result.agent}: ${job.done} / ${job.total} positions${state}`;
      if (job.status !== "running") break;
      await sleep(300);
      if (graph.job !== id) break;
      job = await api("/api/analysis/" + encodeURIComponent(id));
    }
  } catch (e) {
    if (graph.job === id) {
      $("ga-status").textContent = "";
      showMessage("game analysis: " + e.message);
    }
  } finally {
    if (graph.job === id || id === null) {
      graph.job = null;
      $("ga-run").disabled = false;
      $("ga-cancel").disabled = true;
    }
  }
}

function cancelGameAnalysis() {
  if (!graph.job) return;
  cancelJob(graph.job);
  $("ga-cancel").disabled = true;
}

// The value of every seat by ply (seat 0 alone for two players), each seat's line in its
// colour on the board (a light one outlined), the current ply marked; a click on the chart
// calls onPly with the nearest ply. `res`: {agent, seats, points: [{ply, player, values,
// chosen, played}]}.
function drawGraph(res, lastPly, nowPly, onPly) {
  const box = $("graph");
  if (!res) return;
  box.hidden = false;
  const colours = seatColours();
  // drawn at the size it is shown (its text at its own size): the box's width, a height
  // that leaves the board room in a small window
  const W = Math.max(300, Math.round(box.clientWidth || 800));
  const H = Math.round(Math.min(150, Math.max(72, window.innerHeight * 0.14)));
  const L = 34, R = 8, T = 8, B = 20;
  const last = Math.max(1, lastPly);
  const seats = res.seats === 2 ? [0] : [...Array(res.seats).keys()];
  const vals = res.points.flatMap((p) => seats.map((s) => p.values[s])).filter((v) => v !== null && v !== undefined);
  let lo = -1, hi = 1;
  if (res.seats === 1 && vals.length) {  // a solo score: its own range
    lo = Math.min(...vals); hi = Math.max(...vals);
    if (hi - lo < 1e-9) { lo -= 1; hi += 1; }
  } else if (vals.length) {
    lo = Math.min(lo, ...vals); hi = Math.max(hi, ...vals);
  }
  const x = (ply) => L + (W - L - R) * Math.min(ply, last) / last;
  const y = (v) => T + (H - T - B) * (hi - v) / (hi - lo);
  const svg = document.createElementNS(SVGNS, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("width", String(W));
  svg.setAttribute("height", String(H));
  const el = (name, attrs, parent) => {
    const e = document.createElementNS(SVGNS, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    (parent || svg).appendChild(e);
    return e;
  };
  el("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" });
  el("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" });
  if (lo < 0 && hi > 0) el("line", { x1: L, y1: y(0), x2: W - R, y2: y(0), class: "zero" });
  for (const v of [hi, lo]) {
    el("text", { x: L - 4, y: y(v) + 4, "text-anchor": "end" }).textContent = v.toFixed(res.seats === 1 ? 0 : 1);
  }
  el("text", { x: W - R, y: H - 4, "text-anchor": "end" }).textContent = `ply ${lastPly}`;
  for (const s of seats) {
    const pts = res.points.filter((p) => p.values[s] !== null && p.values[s] !== undefined);
    if (!pts.length) continue;
    const colour = colours[s % colours.length];
    const line = pts.map((p) => `${x(p.ply).toFixed(1)},${y(p.values[s]).toFixed(1)}`).join(" ");
    el("polyline", { class: "seat-halo", points: line });
    el("polyline", { class: "seat", "data-seat": s, stroke: colour, points: line });
    for (const p of pts) {
      const c = el("circle", { cx: x(p.ply).toFixed(1), cy: y(p.values[s]).toFixed(1), r: 3,
                               fill: colour, stroke: "#333", "stroke-width": 1, "data-ply": p.ply });
      const t = el("title", {}, c);
      t.textContent = `ply ${p.ply}: seat ${s} ${p.values[s] >= 0 ? "+" : ""}${p.values[s].toFixed(2)} ` +
        `(P${p.player} to move; search plays ${p.chosen}` + (p.played && p.played !== p.chosen ? `, the game ${p.played}` : "") + ")";
    }
  }
  el("line", { class: "now", x1: x(nowPly).toFixed(1), y1: T, x2: x(nowPly).toFixed(1), y2: H - B });
  svg.addEventListener("click", (ev) => {
    const m = svg.getScreenCTM();
    if (!m) return;
    const pt = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(m.inverse());
    onPly(Math.max(0, Math.round((pt.x - L) / (W - L - R) * last)));
  });
  // the legend, in HTML: a swatch per seat
  const legend = document.createElement("div");
  legend.className = "graph-legend";
  const what = document.createElement("span");
  what.textContent = (res.seats === 1 ? "score" : seats.length === 1 ? "value for seat 0" : "value per seat") +
    ` (${res.agent}):`;
  legend.appendChild(what);
  for (const s of seats) {
    const item = document.createElement("span");
    item.className = "swatch-item";
    const sw = document.createElement("span");
    sw.className = "swatch";
    sw.style.background = colours[s % colours.length];
    const names = res.players || [];
    item.append(sw, `seat ${s}` + (names[s] ? ` (${names[s]})` : ""));
    legend.appendChild(item);
  }
  box.replaceChildren(legend, svg);
}

function markGraph() {
  if (view.mode === "replay" && graph.res) drawGraph(graph.res, view.positions - 1, view.ply, go);
}

// The live value graph of a game in play: each agent's root value after its move.
function drawPlayGraph(g) {
  if (!g.values || !g.values.length) { $("graph").hidden = true; $("graph").replaceChildren(); return; }
  const res = { agent: "the agents' searches", seats: g.seats.length, players: g.seats, points: g.values };
  drawGraph(res, g.ply, play.review === null ? g.ply : play.review, (ply) => lookAt(ply));
}

// -- an analysis's candidates, its heat map and its lines ------------------------------------

// The last finished position analysis: { id (its job), res }; the line shown: { cand, step }.
let analysed = null;
const line = { cand: null, step: 0, token: 0 };

function drawAnalysis(res, id) {
  analysed = { id, res, ply: view.mode === "play" && play.game ? play.game.ply : null };
  line.cand = null;
  $("an-status").textContent = `${res.agent}: ${res.simulations} simulations, value ${res.root_value}; plays ${res.chosen}` +
    (id ? " (click a move: its line on the board)" : "");
  const list = $("an-list");
  list.replaceChildren();
  res.candidates.slice(0, 30).forEach((c, k) => {
    const li = document.createElement("li");
    li.className = "cand";
    li.dataset.cand = String(k);
    const v = c.value === null ? "-" : c.value.toFixed(2);
    const head = document.createElement("div");
    head.textContent = `${c.notation}  ${c.visits}v (${(100 * c.share).toFixed(0)}%)  value ${v}  prior ${c.prior.toFixed(2)}`;
    li.appendChild(head);
    if (c.line && c.line.length > 1) {
      const pv = document.createElement("div");
      pv.className = "pv";
      pv.textContent = "→ " + c.line.slice(1).map((m) => m.notation).join(" ");
      li.appendChild(pv);
    }
    if (id) {
      li.title = "show this move's line on the board (← → step through it, Esc: back)";
      li.addEventListener("click", () => showLine(k));
    }
    list.appendChild(li);
  });
  drawHeat(res);
}

// The heat map: the visit share of every move named by a hex, summed per hex.
function drawHeat(res) {
  const layer = overlay("analysis");
  if (!layer) return;
  const heat = new Map();
  for (const c of res.candidates) {
    if (!c.at || !c.visits) continue;
    const key = c.hex.join(",");
    const h = heat.get(key) || { at: c.at, hex: c.hex, share: 0, best: c };
    h.share += c.share;
    heat.set(key, h);
  }
  const top = Math.max(...[...heat.values()].map((h) => h.share), 1e-9);
  const radius = (play.game && play.game.hex_radius) || 30;
  for (const h of heat.values()) {
    const p = hexagon(layer, h.at, radius * 0.85, "cand", {
      "fill-opacity": (0.15 + 0.7 * h.share / top).toFixed(2), "data-q": h.hex[0], "data-r": h.hex[1] });
    const t = document.createElementNS(SVGNS, "title");
    t.textContent = `${h.hex.join(",")}: ${(100 * h.share).toFixed(1)}% of the visits; best ${h.best.notation}`;
    p.appendChild(t);
    if (h.share >= 0.05 * top) label(layer, h.at, `${(100 * h.share).toFixed(0)}%`, "cand-label");
  }
}

// The line's moves from step `from` on, numbered on the board in the colour of the seat that
// plays them (chance draws, which name no hex, are listed only).
function drawLineMarks(c, from) {
  const layer = overlay("line");
  if (!layer) return;
  const colours = seatColours();
  const radius = (play.game && play.game.hex_radius) || 30;
  const seen = new Map();
  c.line.forEach((m, i) => {
    if (i < from || !m.at) return;
    const key = m.at.join(",");
    const k = seen.get(key) || 0;
    seen.set(key, k + 1);
    const at = [m.at[0] + k * 0.45 * radius, m.at[1] - k * 0.3 * radius];
    const fill = m.player === "chance" ? "#999" : colours[m.player % colours.length];
    const g = document.createElementNS(SVGNS, "g");
    g.setAttribute("class", "line-move");
    g.setAttribute("data-step", String(i + 1));
    const circle = document.createElementNS(SVGNS, "circle");
    circle.setAttribute("cx", at[0].toFixed(1));
    circle.setAttribute("cy", at[1].toFixed(1));
    circle.setAttribute("r", (0.4 * radius).toFixed(1));
    circle.setAttribute("style", `fill: ${fill}`);
    const t = document.createElementNS(SVGNS, "title");
    t.textContent = `${i + 1}. ${m.player === "chance" ? "" : "P" + m.player + " "}${m.notation}`;
    g.append(circle, t);
    layer.appendChild(g);
    const n = document.createElementNS(SVGNS, "text");
    n.setAttribute("x", at[0].toFixed(1));
    n.setAttribute("y", (at[1] + 5).toFixed(1));
    n.setAttribute("text-anchor", "middle");
    n.setAttribute("class", "line-number");
    n.setAttribute("style", `fill: ${inkOn(fill)}`);
    n.textContent = String(i + 1);
    g.appendChild(n);
  });
}

function showLine(k) {
  if (!analysed || !analysed.res.candidates[k]) return;
  line.cand = k;
  for (const li of $("an-list").children) li.classList.toggle("shown", li.dataset.cand === String(k));
  lineStep(0);
}

// Step `step` of the line shown: the position after its first `step` moves (0: the position
// analysed, with the heat map), the moves still to come numbered on it.
async function lineStep(step) {
  if (line.cand === null || !analysed) return;
  const c = analysed.res.candidates[line.cand];
  step = Math.max(0, Math.min(c.line.length, step));
  line.step = step;
  const token = ++line.token;
  $("line-bar").hidden = false;
  const moves = c.line.map((m, i) => (i < step ? "" : "") + m.notation);
  $("line-status").textContent = `line of ${c.notation}: step ${step} / ${c.line.length}` +
    (step > 0 ? `: ${moves[step - 1]}` : " (the position analysed)");
  try {
    if (step === 0) {  // the position analysed, as it was shown (its last action marked)
      await showPosition();
    } else {
      const pos = await api(`/api/analysis/${encodeURIComponent(analysed.id)}/line?cand=${line.cand}&step=${step}`);
      if (token !== line.token || line.cand === null) return;
      setBoard(pos.svg);
    }
    if (token !== line.token || line.cand === null) return;
    $("board").dataset.lineStep = String(step);
    drawLineMarks(c, step);
  } catch (e) {
    if (token === line.token) showMessage("line: " + e.message);
  }
}

// The board of the record's position or of the game shown, with the analysis's heat map.
async function showPosition() {
  if (view.mode === "play" && play.game) {
    renderGame(play.game);
    if (analysed) drawHeat(analysed.res);
  } else if (view.mode === "replay" && view.path !== null) {
    await redrawReplay();
  }
}

// Leave the line: the board of the position shown before it.
function closeLine() {
  if (line.cand === null) return;
  line.cand = null;
  line.token++;
  $("line-bar").hidden = true;
  delete $("board").dataset.lineStep;
  for (const li of $("an-list").children) li.classList.remove("shown");
  showPosition();
}

// -- tournament runs --------------------------------------------------------------------------

async function loadRuns(wanted) {
  try {
    const data = await api("/api/runs");
    const picker = $("run-picker");
    while (picker.options.length > 1) picker.remove(1);
    for (const r of data.runs) {
      const opt = document.createElement("option");
      opt.value = r.path;
      opt.textContent = r.name;
      picker.appendChild(opt);
    }
    if (!data.runs.length) showMessage("no tournament runs (a directory with results.json and games/) under the served directories");
    if (wanted === null && runs.path !== null) { wanted = runs.path; setHash(false); }
    picker.value = wanted || "";
    if (wanted) await openRun(wanted);
  } catch (e) {
    showMessage("cannot list the runs: " + e.message);
  }
}

async function openRun(path) {
  const box = $("run");
  box.replaceChildren();
  showMessage("");
  runs.path = null;
  if (!path) return;
  try {
    const run = await api("/api/run?path=" + encodeURIComponent(path));
    runs.path = run.path;
    const h = document.createElement("h3");
    h.textContent = `${run.game || ""}: ${(run.agents || []).join(", ")}`;
    const table = document.createElement("table");
    table.id = "ratings";
    table.innerHTML = "<tr><th>agent</th><th>Elo</th><th>95% interval</th><th>score</th><th>games</th></tr>";
    for (const r of run.ratings) {
      const tr = document.createElement("tr");
      const ci = r.elo_ci95 ? r.elo_ci95.map((x) => x === null ? "-" : x.toFixed(0)).join(" .. ") : "-";
      for (const cell of [r.agent, r.elo === null ? "-" : r.elo.toFixed(1), ci,
                          r.score === null ? "-" : r.score.toFixed(3), r.games]) {
        const td = document.createElement("td");
        td.textContent = String(cell);
        tr.appendChild(td);
      }
      table.appendChild(tr);
    }
    const pre = document.createElement("pre");
    pre.textContent = run.table_text;
    const pics = document.createElement("div");
    pics.className = "pictures";
    for (const p of run.pictures) {
      const img = document.createElement("img");
      img.src = "/api/picture?path=" + encodeURIComponent(p);
      img.alt = p;
      pics.appendChild(img);
    }
    const games = document.createElement("ol");
    games.id = "run-games";
    for (const g of run.games) {
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.href = `#replay/${segs(g.path)}/0`;
      a.textContent = g.id;
      const won = g.winners ? g.winners.map((w) => g.seats ? g.seats[w] : w).join(", ") : "?";
      li.append(a, ` ${g.seats ? g.seats.join(" vs ") : ""}: ${g.end_reason || ""} after ${g.plies ?? "?"} plies, won by ${won}`);
      games.appendChild(li);
    }
    const gh = document.createElement("h3");
    gh.textContent = `games (${run.games.length})`;
    box.append(h, table, pics, pre, gh, games);
  } catch (e) {
    showMessage(e.message);
  }
}

// -- wiring -----------------------------------------------------------------------------------

for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => setMode(b.dataset.view));
$("picker").addEventListener("change", (ev) => {
  if (ev.target.value) { location.hash = `#replay/${segs(ev.target.value)}/0`; return; }
  showIndex();
  setHash(true);
});
$("run-picker").addEventListener("change", (ev) => {
  if (ev.target.value) { location.hash = "#runs/" + segs(ev.target.value); return; }
  runs.path = null;
  $("run").replaceChildren();
  setHash(true);
});
$("first").addEventListener("click", () => go(0));
$("prev").addEventListener("click", () => step(-1));
$("next").addEventListener("click", () => step(1));
$("last").addEventListener("click", () => go(view.positions - 1));
$("slider").addEventListener("input", (ev) => go(Number(ev.target.value)));
$("ng-start").addEventListener("click", startGame);
// the legal ways at a spot come in action-id order, N NW SW S SE NE: counter-clockwise
$("rot-left").addEventListener("click", () => rotate(1));
$("rot-right").addEventListener("click", () => rotate(-1));
$("place").addEventListener("click", () => play.selected && sendMove(play.selected.moves[play.selected.index].notation));
$("unselect").addEventListener("click", () => { play.selected = null; showChoice(); });
$("save").addEventListener("click", saveGame);
$("an-run").addEventListener("click", runAnalysis);
$("an-cancel").addEventListener("click", cancelAnalysis);
$("ga-run").addEventListener("click", runGameAnalysis);
$("ga-cancel").addEventListener("click", cancelGameAnalysis);
$("line-prev").addEventListener("click", () => lineStep(line.step - 1));
$("line-next").addEventListener("click", () => lineStep(line.step + 1));
$("line-close").addEventListener("click", closeLine);
$("board").addEventListener("click", boardClick);
$("board").addEventListener("mouseover", boardHover);
$("board").addEventListener("mouseout", (ev) => {
  if (ev.target.closest && ev.target.closest("polygon.spot") && view.mode === "play") previewChosen();
});
document.addEventListener("keydown", (ev) => {
  const tag = ev.target && ev.target.tagName;
  if (tag === "SELECT" || tag === "INPUT" || tag === "TEXTAREA") return;
  let keys = {};
  if (line.cand !== null) {
    keys = { ArrowLeft: () => lineStep(line.step - 1), ArrowRight: () => lineStep(line.step + 1),
             Home: () => lineStep(0), End: () => lineStep(Infinity), Escape: closeLine };
  } else if (view.mode === "replay") {
    keys = { ArrowLeft: () => step(-1), ArrowRight: () => step(1),
             Home: () => go(0), End: () => go(view.positions - 1) };
  } else if (view.mode === "play" && play.game && !play.selected) {
    const at = play.review === null ? play.game.ply : play.review;
    keys = { ArrowLeft: () => lookAt(at - 1), ArrowRight: () => lookAt(at + 1),
             Home: () => lookAt(0), End: () => lookAt(null) };
  } else if (view.mode === "play" && play.selected) {
    // Q, [: counter-clockwise; E, R, ]: clockwise; with Shift, each the other way (Shift+R
    // counter-clockwise, whatever the Caps Lock)
    const turn = (dir) => () => rotate(ev.shiftKey ? -dir : dir);
    keys = { q: turn(1), "[": turn(1), "{": turn(1), e: turn(-1), r: turn(-1), "]": turn(-1),
             "}": turn(-1), Enter: () => $("place").click(), Escape: () => $("unselect").click() };
  }
  const key = ev.key && ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
  if (keys[key] && !ev.ctrlKey && !ev.metaKey && !ev.altKey) { ev.preventDefault(); keys[key](); }
});
wireZoom();
window.addEventListener("resize", () => {
  if (view.mode === "replay") markGraph(); else if (view.mode === "play" && play.game) drawPlayGraph(play.game);
  fitBoard();
});
window.addEventListener("hashchange", () => { if (location.hash !== applied) route(); });
window.addEventListener("popstate", () => { if (location.hash !== applied) route(); });
// the addresses of earlier versions: /?record=P#replay, /?run=P#runs
const legacy = new URLSearchParams(location.search);
if (legacy.get("record")) history.replaceState(null, "", `${location.pathname}#replay/${segs(legacy.get("record"))}/0`);
else if (legacy.get("run")) history.replaceState(null, "", `${location.pathname}#runs/${segs(legacy.get("run"))}`);
route();
loadList();
