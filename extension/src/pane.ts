/**
 * One pane of the kernel view: a header (title, line count, copy, collapse,
 * maximise, wrap/scroll, optional variant toggle) over a scrollable body of
 * numbered, highlighted lines, optionally with heat columns.  Where the pane sits
 * and how wide it is belongs to the view's layout (`layout.ts`).
 */
import { PaneId } from './bundle';
import { button, compactNumber, el, scrollRowIntoView } from './dom';
import { LineTokenizer, Token, tokenizeText } from './languages';
import { LineLinks } from './linemap';

/** One heat column: a value per Python line (or per pane line), drawn as a shaded cell. */
export interface HeatColumn {
  /** Short column label shown above the column, e.g. "instr". */
  label: string;
  /** Unit in the cell's title, e.g. "instructions executed". */
  unit: string;
  /** What the column shows, the title of its label. */
  description: string;
  /** CSS class suffix, e.g. "instructions". */
  kind: string;
  /** Keyed by Python line, or by this pane's 1-based line when `byPaneLine`. */
  values: Map<number, number>;
  byPaneLine?: boolean;
}

/** A second text the pane can switch to (e.g. unoptimised LLVM IR). */
export interface PaneVariant {
  label: string;
  title: string;
  text: string;
}

/** Everything needed to build a pane. */
export interface PaneOptions {
  id: PaneId;
  title: string;
  text: string | null;
  /** Shown instead of the body when `text` is null. */
  missing: string | null;
  tokenizer: LineTokenizer<unknown>;
  links: LineLinks;
  heat: HeatColumn[];
  variant: PaneVariant | null;
  /** Number shown in the gutter of the first line (the python pane's first_line). */
  firstLine: number;
  /**
   * Number shown in the gutter of each line, instead of counting from
   * `firstLine`; null marks a gap row (shown as ⋮).
   */
  numbers?: (number | null)[] | null;
  /** Shown after the title, e.g. the cell ("In[3]") the python pane comes from. */
  subtitle?: string | null;
  /** How the text is shown (e.g. padding removed); copy keeps the original. */
  display?: (text: string) => string;
  /**
   * Lines kept in the text (and in the line map: they keep their numbers) but not shown,
   * e.g. nvdisasm's `//## File "In[2]", line 5` before each group of SASS instructions.
   */
  hideLine?: (line: string) => boolean;
  /**
   * What the header counts, instead of lines: the lines it accepts, in `unit`
   * (the SASS pane: its instructions, not nvdisasm's labels and hidden `//## File` rows).
   */
  counted?: { unit: string; line: (line: string) => boolean };
  /** The view's pane name (`view.panes[].key`, e.g. "cuda" for a CUDA C++ source pane). */
  key?: string;
  /** Called when the user folds or unfolds the pane (its collapse button). */
  onCollapse?: (pane: Pane, collapsed: boolean) => void;
  /** Called by the maximise button. */
  onMaximise?: (pane: Pane) => void;
}

/** Columns `line` takes in a monospace font with `tab-size: 4` (the pane body's). */
export function lineColumns(line: string): number {
  let col = 0;
  for (const ch of line) {
    col = ch === '\t' ? col + 4 - (col % 4) : col + 1;
  }
  return col;
}

/** Lines of `text` as shown: a final newline does not open an empty last line. */
function splitLines(text: string): string {
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

function lineCount(text: string): number {
  return splitLines(text).split('\n').length;
}

/** `n` of a plural `unit` as the static view's `pane_count` says it: "1 line", "1,234 lines". */
export function countWords(n: number, unit: string): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? unit.replace(/s$/, '') : unit}`;
}

function renderTokens(line: string, tokens: Token[]): HTMLElement {
  const code = el('span', 'wl-code');
  let pos = 0;
  for (const t of tokens) {
    if (t.from > pos) {
      code.appendChild(document.createTextNode(line.slice(pos, t.from)));
    }
    code.appendChild(el('span', `wl-tok wl-tok-${t.kind}`, line.slice(t.from, t.to)));
    pos = t.to;
  }
  if (pos < line.length) {
    code.appendChild(document.createTextNode(line.slice(pos)));
  }
  if (line.length === 0) {
    code.appendChild(document.createTextNode(' '));
  }
  return code;
}

/** A pane; `node` is its root element, `rows[i]` the element of line i+1. */
export class Pane {
  readonly node: HTMLElement;
  readonly body: HTMLElement;
  rows: HTMLElement[] = [];
  /** False while the pane shows its variant, whose lines are not mapped. */
  mapped = true;
  /** The widest shown line, in monospace columns (what the layout gives a short pane). */
  maxColumns = 0;
  /** The strip on the pane's right edge that resizes it against its right neighbour. */
  readonly handle: HTMLElement;
  private currentText: string;
  private collapseButton!: HTMLButtonElement;
  private maximiseButton!: HTMLButtonElement;

  constructor(private readonly options: PaneOptions) {
    this.node = el('section', `wl-pane wl-pane-${options.id}`);
    this.node.dataset.pane = options.id;
    this.node.dataset.key = options.key ?? options.id;
    this.node.setAttribute('aria-label', `${options.title} pane`);
    this.currentText = options.text ?? '';
    this.body = el('div', 'wl-pane-body');
    // focusable even when too short to scroll: the arrow keys move a linked cursor line
    this.body.tabIndex = 0;
    this.body.setAttribute('role', 'region');
    this.body.setAttribute(
      'aria-label',
      `${options.title} code; arrow keys, Home and End move a cursor line that highlights ` +
        'the lines of the other panes compiled from the same Python line'
    );
    this.node.appendChild(this.makeHeader());
    this.node.appendChild(this.body);
    this.handle = el('div', 'wl-resize');
    this.handle.setAttribute('role', 'separator');
    this.handle.setAttribute('aria-orientation', 'vertical');
    this.handle.setAttribute('aria-label', `Resize the ${options.title} pane (drag, or arrow keys)`);
    this.handle.title = `Drag to resize the ${options.title} pane`;
    this.handle.tabIndex = 0;
    this.node.appendChild(this.handle);
    if (options.text === null) {
      this.body.appendChild(el('div', 'wl-missing', `${options.title} not available: ${options.missing ?? 'unknown reason'}`));
    } else {
      this.fill(options.text, true);
    }
  }

  /** The pane's id ("python", "llvm", "ptx" or "sass"). */
  get id(): PaneId {
    return this.options.id;
  }

  /** The pane's title, as its header shows it. */
  get title(): string {
    return this.options.title;
  }

  /** Whether the pane is folded to its header. */
  get collapsed(): boolean {
    return this.node.classList.contains('wl-collapsed');
  }

  /** Fold the pane to its header, or unfold it (the layout calls this; no callback). */
  setCollapsed(collapsed: boolean): void {
    this.node.classList.toggle('wl-collapsed', collapsed);
    const toggle = this.collapseButton;
    toggle.textContent = collapsed ? '+' : '−';
    toggle.setAttribute('aria-expanded', String(!collapsed));
    toggle.title = `${collapsed ? 'Expand' : 'Collapse'} the ${this.options.title} pane`;
    toggle.setAttribute('aria-label', toggle.title);
  }

  /** Mark the pane as the one shown full width (its maximise button pressed). */
  setMaximised(maximised: boolean): void {
    this.node.classList.toggle('wl-maximised', maximised);
    this.maximiseButton.setAttribute('aria-pressed', String(maximised));
    this.maximiseButton.classList.toggle('wl-active', maximised);
    this.maximiseButton.title = maximised
      ? 'Restore the side-by-side panes'
      : `Show the ${this.options.title} pane full width, the others folded to their headers`;
    this.maximiseButton.setAttribute('aria-label', this.maximiseButton.title);
  }

  /**
   * The pane's width besides its code: gutter, heat columns, the code's padding and
   * the borders, in px (0 before the pane has rows).
   */
  chromeWidth(): number {
    const row = this.rows.find(r => !r.classList.contains('wl-hidden-line'));
    if (!row || row.offsetWidth === 0) {
      return 0;  // no rows, or not laid out (an output the notebook has not drawn yet)
    }
    let width = 2;  // the pane's borders
    for (const child of Array.from(row.children) as HTMLElement[]) {
      width += child.classList.contains('wl-code') ? 12 : child.offsetWidth;  // code: its padding
    }
    return width;
  }

  /** The row element of 1-based `line`, if the pane shows it. */
  rowOf(line: number): HTMLElement | undefined {
    return this.rows[line - 1];
  }

  /** Scroll the body so 1-based `line` is visible. */
  scrollToLine(line: number): void {
    const row = this.rowOf(line);
    if (row) {
      scrollRowIntoView(this.body, row);
    }
  }

  private makeHeader(): HTMLElement {
    const { title, text, variant } = this.options;
    const header = el('header', 'wl-pane-header');
    const collapse = button('wl-collapse', '−', `Collapse the ${title} pane`);
    collapse.setAttribute('aria-expanded', 'true');
    collapse.addEventListener('click', () => {
      this.setCollapsed(!this.collapsed);
      this.options.onCollapse?.(this, this.collapsed);
    });
    this.collapseButton = collapse;
    header.appendChild(collapse);
    header.appendChild(el('span', 'wl-pane-title', title));
    if (this.options.subtitle) {
      header.appendChild(el('span', 'wl-pane-file', this.options.subtitle));
    }
    const count = el('span', 'wl-pane-count', text === null ? '' : this.countText(text));
    header.appendChild(count);
    if (variant !== null) {
      const toggle = button('wl-variant', variant.label, variant.title);
      toggle.setAttribute('aria-pressed', 'false');
      toggle.addEventListener('click', () => {
        const showVariant = this.mapped;
        this.fill(showVariant ? variant.text : this.options.text ?? '', !showVariant);
        toggle.setAttribute('aria-pressed', String(showVariant));
        toggle.classList.toggle('wl-active', showVariant);
        count.textContent = this.mapped
          ? this.countText(this.currentText)
          : countWords(lineCount(this.currentText), 'lines');
      });
      header.appendChild(toggle);
    }
    if (text !== null) {
      // long lines: scrolled sideways (the default, a scrollbar under the pane) or wrapped
      const wrap = button('wl-wrap-toggle', 'Wrap', `Wrap the ${title} pane's long lines instead of scrolling`);
      wrap.setAttribute('aria-pressed', 'false');
      wrap.addEventListener('click', () => {
        const wrapped = this.node.classList.toggle('wl-wrap');
        wrap.setAttribute('aria-pressed', String(wrapped));
        wrap.classList.toggle('wl-active', wrapped);
      });
      header.appendChild(wrap);
    }
    const maximise = button('wl-maximise', '⤢', `Show the ${title} pane full width, the others folded to their headers`);
    maximise.setAttribute('aria-pressed', 'false');
    maximise.addEventListener('click', () => this.options.onMaximise?.(this));
    this.maximiseButton = maximise;
    header.appendChild(maximise);
    if (text !== null) {
      const copy = button('wl-copy', 'Copy', `Copy the ${title} text`);
      copy.addEventListener('click', () => void this.copy(copy));
      header.appendChild(copy);
    }
    return header;
  }

  /** The header's count of `text` (the pane's own): "42 lines", or `counted`'s, "20 instructions". */
  private countText(text: string): string {
    const counted = this.options.counted;
    if (counted) {
      return countWords(splitLines(text).split('\n').filter(counted.line).length, counted.unit);
    }
    return countWords(this.shownLineCount(text), 'lines');
  }

  /** Lines of `text` (the pane's own), gap rows not counted. */
  private shownLineCount(text: string): number {
    const numbers = this.options.numbers;
    return numbers ? numbers.filter(n => n !== null).length : lineCount(text);
  }

  private async copy(copyButton: HTMLButtonElement): Promise<void> {
    try {
      await navigator.clipboard.writeText(this.currentText);
      copyButton.textContent = 'Copied';
    } catch {
      copyButton.textContent = 'Copy failed';
    }
    window.setTimeout(() => (copyButton.textContent = 'Copy'), 1500);
  }

  /** Replace the body with `text`; `mapped` says if the line map applies. */
  private fill(text: string, mapped: boolean): void {
    const { id, links, heat, tokenizer } = this.options;
    this.mapped = mapped;
    this.currentText = text;
    this.body.replaceChildren();
    const shown = this.options.display ? this.options.display(text) : text;
    const { lines, tokens } = tokenizeText(tokenizer, splitLines(shown));
    const maxima = heat.map(h => Math.max(1, ...h.values.values()));
    const first = mapped ? this.options.firstLine : 1;
    const given = mapped ? this.options.numbers ?? null : null;
    const numbers = lines.map((_, i) => (given ? given[i] ?? null : first + i));
    const width = Math.max(1, ...numbers.map(n => String(n ?? '').length));
    this.maxColumns = lines.reduce(
      (most, l) => (this.options.hideLine?.(l) ? most : Math.max(most, lineColumns(l))), 0);
    if (heat.length > 0) {
      // the columns' labels, in a row of their own above the first line
      const head = el('div', 'wl-heat-head');
      head.appendChild(el('span', 'wl-gutter', ' '.repeat(width)));
      for (const column of heat) {
        const label = el('span', `wl-heat wl-heat-label wl-heat-${column.kind}`, column.label);
        label.title = column.description;
        head.appendChild(label);
      }
      this.body.appendChild(head);
    }
    this.rows = lines.map((line, i) => {
      const n = i + 1;
      const row = el('div', 'wl-line');
      row.dataset.line = String(n);
      const number = numbers[i];
      if (this.options.hideLine?.(line)) {
        row.classList.add('wl-hidden-line');
      }
      if (number === null) {
        row.classList.add('wl-gap');  // lines skipped between two parts
      }
      const gutter = number === null ? '⋮' : String(number);
      row.appendChild(el('span', 'wl-gutter', gutter.padStart(width)));
      const pyLines = mapped ? links.pythonLinesOf(id, n) : [];
      heat.forEach((column, k) =>
        row.appendChild(heatCell(column, column.byPaneLine ? (mapped ? [n] : []) : pyLines, maxima[k]))
      );
      row.appendChild(renderTokens(line.replace(/\r$/, ''), tokens[i]));
      const color = mapped ? links.colorOfPaneLine(id, n) : null;
      if (color !== null) {
        row.style.backgroundColor = color;
        row.classList.add('wl-mapped');
      }
      this.body.appendChild(row);
      return row;
    });
  }
}

/** The cell of `column` for a row whose values are at `keys` (Python lines, or the row's own line). */
function heatCell(column: HeatColumn, keys: number[], max: number): HTMLElement {
  const cell = el('span', `wl-heat wl-heat-${column.kind}`);
  const values = keys.map(key => column.values.get(key)).filter((v): v is number => v !== undefined);
  if (values.length === 0) {
    return cell;
  }
  const value = Math.max(...values);
  cell.textContent = compactNumber(value);
  cell.title = `${value} ${column.unit}`;
  cell.style.setProperty('--wl-heat', String(Math.min(1, value / max)));
  return cell;
}
