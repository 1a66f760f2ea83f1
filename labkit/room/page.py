"""The instructor's page: the room's distribution of predictions beside the real outcomes,
redrawn from api/room every second without a reload, and the form that pushes the next
crash point. Its words come from the catalogue, in the language asked for.
"""

from __future__ import annotations

import html
import json

from labkit.language import catalogue
from labkit.room.store import REPORTED
from labkit.studies.commit_window.orders import NO_KILL, ORDERS
from labkit.studies.commit_window.spec import KILL_MODES

WORDS = ("title", "intro", "next", "none_pushed", "push", "pushed", "point", "predicted",
         "happened", "nobody_yet", "exercises", "exercise", "case")  # fmt: skip
POLL_MS = 1000

SCRIPT = """
const W = JSON.parse(document.getElementById("words").textContent);
const XSRF = {"X-XSRFToken": W.xsrf};  // the hub's check, on every fetch a cookie carries
const POINTS = W.kill_points;
const order = document.getElementById("order"), killAt = document.getElementById("kill_at");
function fillKillPoints() {
  killAt.replaceChildren(...POINTS[order.value].map(p => new Option(p, p)));
}
order.addEventListener("change", fillKillPoints);
fillKillPoints();
function bars(counts, kind) {
  return W.outcomes.filter(o => counts[o]).map(o =>
    `<div class="bar" data-${kind}="${o}"><span class="word">${W.names[o]}</span>` +
    `<span class="fill" style="width:${12 * counts[o]}px"></span>` +
    `<span class="count">${counts[o]}</span></div>`).join("");
}
function esc(text) {  // a participant's words, never markup
  const span = document.createElement("span");
  span.textContent = text;
  return span.innerHTML.replace(/"/g, "&quot;");
}
function answers(counts) {
  return Object.keys(counts).sort().map(a =>
    `<div class="bar" data-answer="${esc(a)}"><span class="word">${esc(a)}</span>` +
    `<span class="fill" style="width:${12 * counts[a]}px"></span>` +
    `<span class="count">${counts[a]}</span></div>`).join("");
}
let version = -1;
async function poll() {
  try {
    const answer = await fetch("api/room", {cache: "no-store", headers: XSRF});
    const room = await answer.json();
    if (answer.ok && room.version !== version) {
      version = room.version;
      document.getElementById("next").textContent = room.next ?
        `${room.next.order} / ${room.next.kill_at} / ${room.next.kill_mode}` : W.none_pushed;
      const rows = room.points.map(p =>
        `<tr data-point="${p.point}"><td><code>${p.order} / ${p.kill_at} / ${p.kill_mode}` +
        `</code></td><td>${bars(p.predicted, "predicted")}</td>` +
        `<td>${bars(p.happened, "happened")}</td></tr>`);
      document.getElementById("rows").innerHTML = rows.join("") ||
        `<tr><td colspan="3">${W.nobody_yet}</td></tr>`;
      document.getElementById("exercise_rows").innerHTML = room.exercises.map(e =>
        `<tr data-case="${esc(e.exercise)}|${esc(e.case)}"><td><code>${esc(e.exercise)}</code>` +
        `</td><td><code>${esc(e.case)}</code></td><td>${answers(e.predicted)}</td></tr>`).join("");
      document.body.dataset.version = version;
    }
  } finally { setTimeout(poll, POLL_MS); }
}
document.getElementById("push").addEventListener("click", async () => {
  const body = {order: order.value, kill_at: killAt.value,
                kill_mode: document.getElementById("kill_mode").value};
  const answer = await fetch("api/next", {method: "POST", body: JSON.stringify(body),
    headers: {"Content-Type": "application/json", ...XSRF}});
  const said = answer.ok ? W.pushed : (await answer.json()).error;
  document.getElementById("pushed").textContent = said;
});
poll();
"""

STYLE = """
body { font-family: sans-serif; margin: 2em; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 4px 10px; }
.bar { display: flex; align-items: center; gap: 6px; margin: 2px 0; }
.word { width: 7em; } .fill { height: 12px; background: #4a7bd0; display: inline-block; }
"""


def options(values) -> str:
    return "".join(f'<option value="{html.escape(v)}">{html.escape(v)}</option>' for v in values)


def room_page(code: str, xsrf: str) -> str:
    """The whole page in language `code`; `xsrf` goes with the push (the hub's XSRF check)."""
    words = catalogue(code)
    say = {name: words[f"room.{name}"] for name in WORDS}
    data = {
        **say,
        "outcomes": list(REPORTED),
        "names": {o: words[f"commit_window.name.{o}"] for o in REPORTED},
        "kill_points": {name: [*o.kill_points, NO_KILL] for name, o in ORDERS.items()},
        "poll_ms": POLL_MS,
        "xsrf": xsrf,
    }
    t = {k: html.escape(v) for k, v in say.items()}
    label = lambda key: html.escape(words[f"panel.{key}"])  # noqa: E731
    blob = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return f"""<!doctype html>
<html lang="{code}"><head><meta charset="utf-8"><title>{t["title"]}</title>
<style>{STYLE}</style></head>
<body data-version="-1"><h1>{t["title"]}</h1><p>{t["intro"]}</p>
<h2>{t["next"]}: <span id="next">{t["none_pushed"]}</span></h2>
<p><label>{label("order")} <select id="order">{options(ORDERS)}</select></label>
<label>{label("kill_at")} <select id="kill_at"></select></label>
<label>{label("kill_mode")} <select id="kill_mode">{options(KILL_MODES)}</select></label>
<button id="push">{t["push"]}</button> <span id="pushed"></span></p>
<table><thead><tr><th>{t["point"]}</th><th>{t["predicted"]}</th><th>{t["happened"]}</th></tr>
</thead><tbody id="rows"></tbody></table>
<h2>{t["exercises"]}</h2>
<table><thead><tr><th>{t["exercise"]}</th><th>{t["case"]}</th><th>{t["predicted"]}</th></tr>
</thead><tbody id="exercise_rows"></tbody></table>
<script type="application/json" id="words">{blob}</script>
<script>{SCRIPT.replace("POLL_MS", "W.poll_ms")}</script>
</body></html>"""
