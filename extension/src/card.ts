/**
 * The resource card and the `--diff previous` table of a kernel view, from the
 * bundle's `view` record (`notebook/view_spec.py`): the same rows the static HTML
 * view's card and diff show (`views.resource_rows`, `diff.diff_record`), laid out
 * as a compact grid instead of a 15-row table.
 */
import { ViewDiff, ViewResources } from './bundle';
import { el } from './dom';

/**
 * The resource card: registers, spills, stack, shared, constant, barriers, occupancy
 * and its limiter, blocks/warps per SM, compile time, the ptxas version, as
 * `label value` cells that flow into as many columns as the output has room for.
 */
export function resourceCard(resources: ViewResources): HTMLElement {
  if ('missing' in resources) {
    return el('div', 'wl-missing wl-resources', `resources: ${resources.missing}`);
  }
  const card = el('details', 'wl-resources');
  card.open = true;
  card.appendChild(el('summary', 'wl-resources-title', `Resources (${resources.arch})`));
  // divs, not a <dl>: JupyterLab's output styles float and indent dt/dd
  const grid = el('div', 'wl-card');
  for (const [label, value] of resources.rows) {
    const fact = el('div', 'wl-fact');
    fact.appendChild(el('div', 'wl-fact-label', label));
    fact.appendChild(el('div', 'wl-fact-value', value));
    grid.appendChild(fact);
  }
  card.appendChild(grid);
  for (const warning of resources.warnings) {
    card.appendChild(el('div', 'wl-warn', `⚠ ${warning}`));
  }
  return card;
}

/** The class of one unified-diff line: an added or removed line, or context. */
function diffLineClass(line: string): string {
  if (line.startsWith('+') && !line.startsWith('+++')) {
    return 'wl-line wl-add';
  }
  if (line.startsWith('-') && !line.startsWith('---')) {
    return 'wl-line wl-del';
  }
  return 'wl-line';
}

/**
 * `--diff previous`: a table of the options and resources that changed (before, after)
 * and a unified diff of the PTX and of the SASS, each a collapsible block (one changing
 * more lines than `diff.OPEN_DIFF_MAX_LINES` starts closed); or the reason there is none.
 */
export function diffView(diff: ViewDiff): HTMLElement {
  if ('missing' in diff) {
    return el('div', 'wl-missing wl-diff', `--diff previous: ${diff.missing}`);
  }
  const box = el('div', 'wl-diff');
  box.appendChild(el('div', 'wl-diff-title', `diff: ${diff.aLabel} → ${diff.bLabel}`));
  if (diff.rows.length === 0) {
    box.appendChild(el('div', 'wl-diff-same', 'resources and options unchanged'));
  } else {
    const table = el('table', 'wl-diff-table');
    const head = el('tr');
    for (const text of ['', diff.aLabel, diff.bLabel]) {
      head.appendChild(el('th', undefined, text));
    }
    table.appendChild(head);
    for (const [field, before, after] of diff.rows) {
      const row = el('tr');
      row.appendChild(el('th', undefined, field));
      row.appendChild(el('td', undefined, before));
      row.appendChild(el('td', undefined, after));
      table.appendChild(row);
    }
    box.appendChild(table);
  }
  for (const block of diff.blocks) {
    const details = el('details', 'wl-diff-block');
    details.dataset.pane = block.title.toLowerCase();
    details.open = block.open;
    details.appendChild(el('summary', undefined, `${block.title}: ${block.summary}`));
    if (block.lines.length > 0) {
      const body = el('div', 'wl-pane-body wl-diff-body');
      for (const line of block.lines) {
        const row = el('div', diffLineClass(line));
        row.appendChild(el('span', 'wl-code', line));
        body.appendChild(row);
      }
      details.appendChild(body);
    }
    box.appendChild(details);
  }
  return box;
}
