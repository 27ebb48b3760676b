// The replay view of `taluva serve` (docs/web.md): no build step, no libraries.
"use strict";

const $ = (id) => document.getElementById(id);
const view = { path: null, positions: 0, ply: 0, boardUrl: null, token: 0 };

function showMessage(text) {
  const box = $("message");
  box.textContent = text || "";
  box.hidden = !text;
}

// GET a JSON route; a non-2xx answer is {"error": "..."}: thrown as its one line.
async function getJSON(url) {
  const resp = await fetch(url);
  let body = null;
  try { body = await resp.json(); } catch (e) { body = null; }
  if (!resp.ok) {
    throw new Error((body && body.error) || `${resp.status} ${resp.statusText}`);
  }
  return body;
}

async function loadList() {
  try {
    const data = await getJSON("/api/records");
    $("dirs").textContent = "serving: " + data.dirs.join(", ");
    const picker = $("picker");
    for (const rec of data.records) {
      const opt = document.createElement("option");
      opt.value = rec.path;
      opt.textContent = rec.name;
      opt.title = rec.dir + "/" + rec.name;
      picker.appendChild(opt);
    }
    if (!data.records.length) showMessage("no game records (*.jsonl) under the served directories");
    const wanted = new URLSearchParams(location.search).get("record");
    if (wanted) { picker.value = wanted; openRecord(wanted); }
  } catch (e) {
    showMessage("cannot list the records: " + e.message);
  }
}

async function openRecord(path) {
  showMessage("");
  view.path = null;
  $("moves").innerHTML = "";
  $("info").textContent = "";
  $("board").removeAttribute("src");
  if (!path) return;
  try {
    const rec = await getJSON("/api/record?path=" + encodeURIComponent(path));
    view.path = rec.path;
    view.positions = rec.positions;
    const info = $("info");
    info.textContent = "";
    const lines = [`game: ${rec.game}`, "players: " + rec.players.map((p, i) => `${i}: ${p}`).join(", "),
                   `result: ${rec.result}`];
    for (const line of lines) {
      const div = document.createElement("div");
      div.textContent = line;
      info.appendChild(div);
    }
    const list = $("moves");
    rec.moves.forEach((m, i) => {
      const li = document.createElement("li");
      li.textContent = (m.player === "chance" ? "" : `P${m.player} `) + m.notation;
      if (m.player === "chance") li.className = "chance";
      li.addEventListener("click", () => go(i + 1));
      list.appendChild(li);
    });
    $("slider").max = String(rec.positions - 1);
    history.replaceState(null, "", "?record=" + encodeURIComponent(rec.path));
    go(0);
  } catch (e) {
    showMessage(e.message);
  }
}

async function go(ply) {
  if (view.path === null) return;
  ply = Math.max(0, Math.min(view.positions - 1, ply));
  view.ply = ply;
  $("slider").value = String(ply);
  $("where").textContent = `position ${ply} / ${view.positions - 1}`;
  const items = $("moves").children;
  for (let i = 0; i < items.length; i++) items[i].classList.toggle("current", i + 1 === ply);
  if (ply > 0 && items[ply - 1]) items[ply - 1].scrollIntoView({ block: "nearest" });
  const token = ++view.token;
  try {
    const resp = await fetch(`/api/board?path=${encodeURIComponent(view.path)}&ply=${ply}`);
    if (!resp.ok) {
      let body = null;
      try { body = await resp.json(); } catch (e) { body = null; }
      throw new Error((body && body.error) || `${resp.status} ${resp.statusText}`);
    }
    const blob = await resp.blob();
    if (token !== view.token) return;  // a later step superseded this one
    if (view.boardUrl) URL.revokeObjectURL(view.boardUrl);
    view.boardUrl = URL.createObjectURL(blob);
    $("board").src = view.boardUrl;
    showMessage("");
  } catch (e) {
    if (token === view.token) showMessage(e.message);
  }
}

$("picker").addEventListener("change", (ev) => openRecord(ev.target.value));
$("first").addEventListener("click", () => go(0));
$("prev").addEventListener("click", () => go(view.ply - 1));
$("next").addEventListener("click", () => go(view.ply + 1));
$("last").addEventListener("click", () => go(view.positions - 1));
$("slider").addEventListener("input", (ev) => go(Number(ev.target.value)));
document.addEventListener("keydown", (ev) => {
  if (ev.target && ev.target.tagName === "SELECT") return;
  const keys = { ArrowLeft: () => go(view.ply - 1), ArrowRight: () => go(view.ply + 1),
                 Home: () => go(0), End: () => go(view.positions - 1) };
  if (keys[ev.key]) { ev.preventDefault(); keys[ev.key](); }
});
loadList();
