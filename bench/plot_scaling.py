#!/usr/bin/env python3
"""plot_scaling: the scaling series of a bench.sh report (cost against corpus size) as a PNG.

Reads the "Scaling" table of a report written by bench/bench.sh (| share | files | lines | wall s | user s | ...),
draws wall and user seconds against lines of code with a least-squares line through the origin-free fit, as an
SVG page, and renders it to PNG with headless Chromium (the renderer the HTML report's tests use).
Usage: bench/plot_scaling.py REPORT.md OUT.png"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def rows(report):
    out, in_table = [], False
    for line in open(report, encoding="utf-8"):
        if line.startswith("| share |"):
            in_table = True
            continue
        if in_table:
            if not line.startswith("|"):
                if out:
                    break
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not re.match(r"^\d+%$", cells[0]):
                continue
            lines = int(cells[2].replace(",", ""))
            out.append((cells[0], lines, float(cells[3]), float(cells[4])))
    if not out:
        raise SystemExit(f"plot_scaling: no scaling table in {report}")
    return out


def fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    a = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    b = my - a * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - (a * x + b)) ** 2 for x, y in zip(xs, ys))
    return a, b, (1 - ss_res / ss_tot) if ss_tot else 1.0


def svg(data, title):
    W, H, L, R, T, B = 800, 500, 80, 30, 50, 70
    xmax = max(d[1] for d in data) * 1.05
    ymax = max(max(d[2], d[3]) for d in data) * 1.15
    X = lambda x: L + (W - L - R) * x / xmax
    Y = lambda y: H - B - (H - T - B) * y / ymax
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="13">',
             f'<rect width="{W}" height="{H}" fill="white"/>',
             f'<text x="{W / 2}" y="28" text-anchor="middle" font-size="16">{title}</text>',
             f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>',
             f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>']
    for i in range(6):
        x = xmax * i / 5
        parts.append(f'<line x1="{X(x)}" y1="{H - B}" x2="{X(x)}" y2="{H - B + 5}" stroke="black"/>')
        parts.append(f'<text x="{X(x)}" y="{H - B + 20}" text-anchor="middle">{x / 1e6:.1f}M</text>')
        y = ymax * i / 5
        parts.append(f'<line x1="{L - 5}" y1="{Y(y)}" x2="{L}" y2="{Y(y)}" stroke="black"/>')
        parts.append(f'<text x="{L - 8}" y="{Y(y) + 4}" text-anchor="end">{y:.1f}</text>')
        parts.append(f'<line x1="{L}" y1="{Y(y)}" x2="{W - R}" y2="{Y(y)}" stroke="#ddd"/>')
    parts.append(f'<text x="{(L + W - R) / 2}" y="{H - 25}" text-anchor="middle">lines of code checked</text>')
    parts.append(f'<text x="20" y="{(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 20 {(T + H - B) / 2})">seconds</text>')
    legend = []
    for k, (name, color) in enumerate((("wall", "#1f77b4"), ("user (CPU)", "#d62728"))):
        xs, ys = [d[1] for d in data], [d[2 + k] for d in data]
        a, b, r2 = fit(xs, ys)
        parts.append(f'<line x1="{X(0)}" y1="{Y(max(b, 0))}" x2="{X(xmax)}" y2="{Y(a * xmax + b)}" stroke="{color}" stroke-dasharray="6 4"/>')
        pts = " ".join(f"{X(x)},{Y(y)}" for x, y in zip(xs, ys))
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2"/>')
        for (share, x, *_), y in zip(data, ys):
            parts.append(f'<circle cx="{X(x)}" cy="{Y(y)}" r="4" fill="{color}"/>')
            if k == 0:
                parts.append(f'<text x="{X(x)}" y="{Y(y) - 10}" text-anchor="middle" fill="#555">{share}</text>')
        legend.append((name, color, a, r2))
    for i, (name, color, a, r2) in enumerate(legend):
        y = T + 10 + 20 * i
        parts.append(f'<line x1="{L + 20}" y1="{y}" x2="{L + 50}" y2="{y}" stroke="{color}" stroke-width="2"/>')
        parts.append(f'<text x="{L + 58}" y="{y + 4}">{name}: {a * 1e6:.2f} s per million lines, linear fit R² = {r2:.4f}</text>')
    parts.append("</svg>")
    return "\n".join(parts), legend


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    report, out = sys.argv[1:]
    data = rows(report)
    doc, legend = svg(data, "xpuify check: cost against corpus size (10%, 25%, 50%, 100% of the corpus)")
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        raise SystemExit("plot_scaling: chromium is needed to render the PNG")
    tmp = tempfile.mkdtemp(prefix="xpuify-plot-")
    try:
        page = os.path.join(tmp, "plot.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write("<!doctype html><html><body style='margin:0'>" + doc + "</body></html>")
        subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--user-data-dir={os.path.join(tmp, 'profile')}", "--window-size=800,500",
                        f"--screenshot={os.path.abspath(out)}", "file://" + page],
                       check=True, capture_output=True, timeout=120)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for name, _, a, r2 in legend:
        print(f"{name}: {a * 1e6:.2f} s per million lines, R^2 {r2:.4f}")


if __name__ == "__main__":
    main()
