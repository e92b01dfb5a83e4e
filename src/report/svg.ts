/**
 * Hand-written SVG bar charts for the report: small, self-contained (no scripts, no fonts, no
 * network) and easy to check. Every bar carries its number in data-* attributes and a <title>
 * tooltip, so the page's numbers can be read back from the DOM and compared with the tables.
 */

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Integers as they are; other numbers with `digits` decimals. */
export function fmt(v: number, digits = 2): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(digits);
}

const attrs = (a: Record<string, string>) =>
  Object.entries(a)
    .map(([k, v]) => ` ${k}="${esc(v)}"`)
    .join('');

export interface Segment {
  key: string;
  label: string;
  value: number;
  color: string;
}

export interface BarRow {
  /** stable id for data-row (e.g. a category id) */
  id: string;
  label: string;
  segments: Segment[];
  /** rows sharing a group get one heading line above them (e.g. the category of leaf rows) */
  group?: string;
}

export interface ChartOptions {
  /** data-* attributes on the <svg> (data-chart, data-generator, ...) */
  data: Record<string, string>;
  title: string;
  rows: readonly BarRow[];
  /** legend entries in order (key, label, color); none when omitted */
  legend?: ReadonlyArray<{ key: string; label: string; color: string }>;
  digits?: number;
}

const ROW_H = 24;
const BAR_W = 440;
const CHAR_W = 6.6; // average glyph width of 12px sans-serif
const TOP = 28;

/**
 * Horizontal bars, each stacked from its segments (left to right), scaled to the largest
 * total. Zero segments draw nothing; the total is written at the end of the bar.
 */
export function stackedBarChart(o: ChartOptions): string {
  const labelW = Math.min(460, Math.max(80, Math.ceil(Math.max(...o.rows.map((r) => r.label.length), 4) * CHAR_W) + 12));
  const legendH = o.legend ? 26 : 0;
  const width = labelW + BAR_W + 80;
  const groups = o.rows.filter((r, i) => r.group !== undefined && r.group !== o.rows[i - 1]?.group).length;
  const height = TOP + legendH + (o.rows.length + groups) * ROW_H + 8;
  const max = Math.max(1e-9, ...o.rows.map((r) => r.segments.reduce((a, s) => a + s.value, 0)));
  const digits = o.digits ?? 2;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img"${attrs(o.data)}>`);
  parts.push(`<title>${esc(o.title)}</title>`);
  parts.push(`<text x="0" y="16" class="chart-title">${esc(o.title)}</text>`);
  if (o.legend) {
    let x = labelW;
    for (const l of o.legend) {
      parts.push(`<rect x="${x}" y="${TOP - 4}" width="12" height="12" fill="${l.color}" class="legend-swatch" data-key="${esc(l.key)}"/>`);
      parts.push(`<text x="${x + 16}" y="${TOP + 6}" class="legend">${esc(l.label)}</text>`);
      x += 28 + l.label.length * CHAR_W;
    }
  }
  let line = 0;
  o.rows.forEach((r, i) => {
    if (r.group !== undefined && r.group !== o.rows[i - 1]?.group) {
      parts.push(`<text x="0" y="${TOP + legendH + line * ROW_H + 16}" class="bar-group">${esc(r.group)}</text>`);
      line++;
    }
    const y = TOP + legendH + line++ * ROW_H;
    parts.push(`<g class="bar-row" data-row="${esc(r.id)}">`);
    parts.push(`<text x="${labelW - 8}" y="${y + 15}" text-anchor="end" class="bar-label">${esc(r.label)}</text>`);
    let x = labelW;
    let total = 0;
    for (const s of r.segments) {
      total += s.value;
      if (s.value <= 0) continue;
      const w = (s.value / max) * BAR_W;
      parts.push(`<rect x="${x.toFixed(2)}" y="${y + 3}" width="${Math.max(w, 0.5).toFixed(2)}" height="${ROW_H - 6}" fill="${s.color}" data-row="${esc(r.id)}" data-key="${esc(s.key)}" data-value="${s.value}"><title>${esc(`${r.label} - ${s.label}: ${fmt(s.value, digits)}`)}</title></rect>`);
      x += w;
    }
    parts.push(`<text x="${(x + 6).toFixed(2)}" y="${y + 15}" class="bar-total" data-row="${esc(r.id)}" data-value="${total}">${esc(fmt(total, digits))}</text>`);
    parts.push('</g>');
  });
  parts.push('</svg>');
  return parts.join('\n');
}
