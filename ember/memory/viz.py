"""ember's memory viewer: a snapshot pickle (PyTorch's format) as one self-contained HTML page,
or as a PNG for reports.

    python -m ember.memory.viz snapshot.pickle -o memory.html [--png memory.png]

The page shows the active memory timeline as PyTorch's viewer draws it (each allocation a band
stacked on those still alive below it, bands above a freed one moving down), with the stack
trace of the allocation under the pointer, and the segment/block map of the allocator at the
moment chosen with the slider. It needs no network access.
"""
import argparse
import html
import json
import pickle


def _frame_text(frames):
    return "\n".join(f"{f['filename']}:{f['line']}:{f['name']}" for f in frames) \
        or "<no Python frames recorded>"


class Timeline:
    """The trace replayed: allocations with their lifetimes and stack positions, and segments.

    Allocations alive before recording started (freed in the trace without an alloc event, or
    still active in the snapshot without one) are drawn from the first moment.
    """

    def __init__(self, snapshot):
        trace = [e for trace in snapshot["device_traces"] for e in trace]
        self.n = len(trace) + 1
        self.frames = []  # distinct stack texts; allocations refer to them by index
        frame_ids = {}

        def frame_id(frames):
            text = _frame_text(frames)
            if text not in frame_ids:
                frame_ids[text] = len(self.frames)
                self.frames.append(text)
            return frame_ids[text]

        self.allocs = []  # dicts: addr, size, t0, t1, frames, points [(t, y), ...]
        self.segments = []  # dicts: addr, size, t0, t1
        live = {}  # addr -> alloc
        live_segments = {}
        seen_freed = set()
        for e in trace:
            if e["action"] == "free_completed" and e["addr"] not in live \
                    and e["addr"] not in seen_freed:
                live[e["addr"]] = {"addr": e["addr"], "size": e["size"], "t0": 0,
                                   "frames": frame_id(e.get("frames", []))}
            if e["action"] == "alloc":
                seen_freed.add(e["addr"])
        allocated_in_trace = {e["addr"] for e in trace if e["action"] == "alloc"}
        for seg in snapshot["segments"]:
            for b in seg["blocks"]:
                if b["state"] == "active_allocated" and b["address"] not in live and \
                        b["address"] not in allocated_in_trace:
                    live[b["address"]] = {"addr": b["address"], "size": b["size"], "t0": 0,
                                          "frames": frame_id(b.get("frames", []))}
        for e in trace:
            if e["action"] == "segment_free" and e["addr"] not in live_segments:
                live_segments[e["addr"]] = {"addr": e["addr"], "size": e["size"], "t0": 0}
        segments_in_trace = {e["addr"] for e in trace if e["action"] == "segment_alloc"}
        for seg in snapshot["segments"]:
            if seg["address"] not in live_segments and seg["address"] not in segments_in_trace:
                live_segments[seg["address"]] = {"addr": seg["address"],
                                                 "size": seg["total_size"], "t0": 0}

        stack = list(live.values())  # bottom to top
        y = 0
        for a in stack:
            a["points"] = [(0, y)]
            y += a["size"]
        self.peak, self.peak_t = y, 0
        self.totals = [y]
        for t, e in enumerate(trace, 1):
            action = e["action"]
            if action == "alloc":
                a = {"addr": e["addr"], "size": e["size"], "t0": t, "points": [(t, y)],
                     "frames": frame_id(e.get("frames", []))}
                live[e["addr"]] = a
                stack.append(a)
                y += a["size"]
            elif action == "free_completed" and e["addr"] in live:
                a = live.pop(e["addr"])
                i = stack.index(a)
                a["t1"] = t
                a["points"].append((t, a["points"][-1][1]))
                self.allocs.append(a)
                del stack[i]
                y -= a["size"]
                for above in stack[i:]:
                    above["points"].append((t, above["points"][-1][1] - a["size"]))
            elif action == "segment_alloc":
                live_segments[e["addr"]] = {"addr": e["addr"], "size": e["size"], "t0": t}
            elif action == "segment_free" and e["addr"] in live_segments:
                seg = live_segments.pop(e["addr"])
                seg["t1"] = t
                self.segments.append(seg)
            self.totals.append(y)
            if y > self.peak:
                self.peak, self.peak_t = y, t
        end = self.n
        for a in stack:
            a["t1"] = end
            a["points"].append((end, a["points"][-1][1]))
            self.allocs.append(a)
        for seg in live_segments.values():
            seg["t1"] = end
            self.segments.append(seg)
        self.allocs.sort(key=lambda a: a["t0"])
        self.segments.sort(key=lambda s: (s["t0"], s["addr"]))

    def data(self):
        return {"n": self.n, "peak": self.peak, "peak_t": self.peak_t, "frames": self.frames,
                "allocs": [[a["addr"], a["size"], a["t0"], a["t1"], a["frames"],
                            [c for p in a["points"] for c in p]] for a in self.allocs],
                "segments": [[s["addr"], s["size"], s["t0"], s["t1"]] for s in self.segments],
                "totals": self.totals}


_PAGE = r"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>$TITLE</title>
<style>
body { font: 13px sans-serif; margin: 12px; color: #222; }
h1 { font-size: 17px; margin: 0 0 4px 0; }
#timeline, #segments { border: 1px solid #bbb; background: #fff; }
#info { white-space: pre-wrap; font: 12px monospace; background: #f6f6f6; border: 1px solid #ddd;
        padding: 6px; height: 170px; overflow: auto; }
.row { display: flex; gap: 12px; align-items: flex-start; }
.axis { font: 11px sans-serif; fill: #444; }
</style></head>
<body>
<h1>$TITLE</h1>
<div id="summary"></div>
<div class="row">
<svg id="timeline" width="900" height="360"></svg>
<div style="flex: 1; min-width: 300px"><b>Allocation under the pointer</b>
<div id="info">Point at an allocation to see its size and the stack that allocated it.</div></div>
</div>
<p><b>Segments and blocks</b> at event <input id="moment" type="range" min="0" value="0"
 style="width: 600px"> <span id="momentLabel"></span></p>
<svg id="segments" width="900" height="60"></svg>
<script>
const DATA = $DATA;
const W = 900, H = 360, L = 70, B = 24, T = 8;
const svgNS = "http://www.w3.org/2000/svg";
function fmt(n) {
  const u = ["B", "KiB", "MiB", "GiB"]; let i = 0;
  while (n >= 1024 && i < 3) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + u[i];
}
function el(tag, attrs, parent) {
  const e = document.createElementNS(svgNS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  parent.appendChild(e); return e;
}
function color(i) { return "hsl(" + ((i * 137.5) % 360) + ",60%,60%)"; }
const info = document.getElementById("info");
function show(a) {
  info.textContent = fmt(a[1]) + " at 0x" + a[0].toString(16) + ", alive from event " + a[2] +
    " to " + a[3] + "\n\n" + DATA.frames[a[4]];
}
document.getElementById("summary").textContent = DATA.allocs.length + " allocations, " +
  (DATA.n - 1) + " events, peak " + fmt(DATA.peak) + " at event " + DATA.peak_t;
(function drawTimeline() {
  const svg = document.getElementById("timeline");
  const top = Math.max(DATA.peak, 1);
  const x = t => L + (W - L - 10) * t / Math.max(DATA.n, 1);
  const y = v => H - B - (H - B - T) * v / top;
  for (let k = 0; k <= 4; k++) {
    const v = top * k / 4;
    el("line", {x1: L, x2: W - 10, y1: y(v), y2: y(v), stroke: "#eee"}, svg);
    el("text", {x: 4, y: y(v) + 4, class: "axis"}, svg).textContent = fmt(v);
  }
  el("text", {x: L, y: H - 6, class: "axis"}, svg).textContent =
    "event (alloc / free / segment) index  ->";
  DATA.allocs.forEach((a, i) => {
    const p = a[5], lower = [], upper = [];
    for (let k = 0; k < p.length; k += 2) {
      lower.push(x(p[k]) + "," + y(p[k + 1]));
      upper.push(x(p[k]) + "," + y(p[k + 1] + a[1]));
    }
    const poly = el("polygon", {points: lower.concat(upper.reverse()).join(" "),
                                fill: color(i), stroke: "none"}, svg);
    poly.addEventListener("mouseover", () => { show(a); poly.setAttribute("stroke", "#000"); });
    poly.addEventListener("mouseout", () => poly.setAttribute("stroke", "none"));
  });
})();
function drawSegments(t) {
  const svg = document.getElementById("segments");
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const segs = DATA.segments.filter(s => s[2] <= t && t < s[3]);
  const rowH = 18, width = W - 10 - L;
  svg.setAttribute("height", Math.max(segs.length, 1) * (rowH + 4) + 4);
  let used = 0;
  segs.forEach((s, r) => {
    const y0 = 4 + r * (rowH + 4);
    el("text", {x: 4, y: y0 + 13, class: "axis"}, svg).textContent = fmt(s[1]);
    el("rect", {x: L, y: y0, width: width, height: rowH, fill: "#f0f0f0", stroke: "#999"}, svg);
    DATA.allocs.forEach((a, i) => {
      if (a[2] <= t && t < a[3] && a[0] >= s[0] && a[0] < s[0] + s[1]) {
        used += a[1];
        const r = el("rect", {x: L + width * (a[0] - s[0]) / s[1], y: y0,
                              width: Math.max(width * a[1] / s[1], 1), height: rowH,
                              fill: color(i), stroke: "#333", "stroke-width": 0.3}, svg);
        r.addEventListener("mouseover", () => show(a));
      }
    });
  });
  const reserved = segs.reduce((n, s) => n + s[1], 0);
  document.getElementById("momentLabel").textContent = t + ": " + segs.length +
    " segments, " + fmt(reserved) + " reserved, " + fmt(used) + " in blocks of live tensors";
}
const moment = document.getElementById("moment");
moment.max = DATA.n - 1; moment.value = DATA.peak_t;
moment.addEventListener("input", () => drawSegments(+moment.value));
drawSegments(DATA.peak_t);
</script>
</body></html>
"""


def to_html(snapshot, title="ember memory timeline"):
    """The viewer page for a snapshot dict, as a string."""
    data = json.dumps(Timeline(snapshot).data(), separators=(",", ":"))
    data = data.replace("</", "<\\/")  # a stack frame's text must not close the script
    return _PAGE.replace("$TITLE", html.escape(title)).replace("$DATA", data)


def to_png(snapshot, path, title="ember memory timeline"):
    """The timeline as a matplotlib picture (needs the `viz` extra: matplotlib)."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("ember.memory.viz --png needs matplotlib: pip install 'ember[viz]'") \
            from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    timeline = Timeline(snapshot)
    fig, ax = plt.subplots(figsize=(10, 4), dpi=100)
    cmap = plt.get_cmap("tab20")
    mib = 1 << 20
    for i, a in enumerate(timeline.allocs):
        ts = [t for t, _ in a["points"]]
        lows = [v / mib for _, v in a["points"]]
        ax.fill_between(ts, lows, [v + a["size"] / mib for v in lows], color=cmap(i % 20),
                        linewidth=0)
    ax.set_xlim(0, timeline.n)
    ax.set_ylim(0, max(timeline.peak / mib, 1e-3) * 1.05)
    ax.set_xlabel("event (alloc / free / segment) index")
    ax.set_ylabel("active memory (MiB)")
    ax.set_title(f"{title}: peak {timeline.peak / mib:.1f} MiB")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m ember.memory.viz",
                                     description="Write a memory snapshot as an HTML page.")
    parser.add_argument("snapshot", help="pickle written by ember.memory._dump_snapshot "
                                         "(or torch.cuda.memory._dump_snapshot)")
    parser.add_argument("-o", "--output", default="memory.html", help="HTML page to write")
    parser.add_argument("--png", help="also write the timeline as a PNG picture")
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)
    with open(args.snapshot, "rb") as f:
        snapshot = pickle.load(f)
    title = args.title or f"memory timeline of {args.snapshot}"
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(to_html(snapshot, title))
    if args.png:
        to_png(snapshot, args.png, title)


if __name__ == "__main__":
    main()
