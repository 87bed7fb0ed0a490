/**
 * Where the panes of a kernel view sit and how wide they are.
 *
 * - By the output's width: every pane open side by side when each gets at least
 *   `MIN_COLUMNS` monospace characters of code, else two a row (2×2), else one a row.
 *   The Python pane takes only the width of its longest line when that is less than
 *   its share, and gives the rest to the others.
 * - Dragging the strip on a pane's right edge (or its arrow keys) moves width between
 *   it and its right neighbour.
 * - A pane's maximise button shows it alone at the full width, the others folded to
 *   their headers; pressed again (or another pane unfolded) the panes come back.
 * - A folded pane (its collapse button) is a narrow strip that gives up its width.
 */
import { el } from './dom';
import { Pane } from './pane';

/** Code columns every open pane should get (an LLVM/PTX/SASS line with its operands). */
export const MIN_COLUMNS = 70;
/** A pane dragged narrower than this many columns stops there. */
const DRAG_MIN_COLUMNS = 12;
/** Arrow keys on a resize strip move this many columns. */
const KEY_STEP_COLUMNS = 4;
/** The gap between panes, as `.wl-pane-row` sets it (px). */
const GAP_PX = 4;

/**
 * How many open panes go in a row: all of them when each gets `need` px, else two,
 * else one. `widths[i]` is what pane i needs (its natural width when that is less).
 *
 * @param available the row's width (px) left after the folded panes' strips
 * @param needs per open pane, the px it needs; `flexible[i]` false for a pane that takes
 *   only its need even when there is more (the short Python pane)
 */
export function panesPerRow(available: number, needs: number[], flexible: boolean[]): number {
  const n = needs.length;
  if (n <= 1) {
    return Math.max(n, 1);
  }
  const candidates = [n, ...(n > 2 ? [2] : [])];
  for (const k of candidates) {
    let fits = true;
    for (let start = 0; start < n && fits; start += k) {
      const row = needs.slice(start, start + k);
      const flex = flexible.slice(start, start + k);
      const room = available - (row.length - 1) * GAP_PX;
      const fixed = row.reduce((sum, w, i) => sum + (flex[i] ? 0 : w), 0);
      const shared = flex.filter(f => f).length;
      const each = shared > 0 ? (room - fixed) / shared : 0;
      fits = row.every((w, i) => (flex[i] ? each >= w : true)) && fixed <= room;
    }
    if (fits) {
      return k;
    }
  }
  return 1;
}

/** Lays out one view's panes in rows and wires resizing and maximising. */
export class PaneLayout {
  private readonly rows: HTMLElement[] = [];
  private perRow = 0;
  private lastWidth = -1;
  private maximised: Pane | null = null;
  /** Each folded state before a pane was maximised (restored after). */
  private beforeMaximise = new Map<Pane, boolean>();
  /** Flex weights of the open panes (px-like: the widths they had when set). */
  private readonly weights = new Map<Pane, number>();
  private observer: ResizeObserver | null = null;
  private charWidth = 0;
  private unmeasured = false;

  /**
   * @param container the element that holds the rows (`.wl-panes`)
   * @param panes the panes, in the order the view shows them
   */
  constructor(
    private readonly container: HTMLElement,
    private readonly panes: Pane[]
  ) {
    for (const pane of panes) {
      this.wireHandle(pane);
    }
  }

  /** Arrange now, and again whenever the container's width changes. */
  attach(): void {
    this.arrange(true);
    if (this.observer === null && typeof ResizeObserver !== 'undefined') {
      this.observer = new ResizeObserver(() => this.arrange(this.unmeasured));
      this.observer.observe(this.container);
      for (const pane of this.panes) {
        this.observer.observe(pane.body);
      }
    }
  }

  /** Stop following the container's width. */
  dispose(): void {
    this.observer?.disconnect();
    this.observer = null;
  }

  /** The pane a header's collapse button folded or unfolded. */
  collapsed(pane: Pane, collapsed: boolean): void {
    if (this.maximised !== null && !collapsed) {
      // unfolding another pane ends the maximised view: that pane joins the others
      const keep = pane;
      this.restore();
      keep.setCollapsed(false);
    }
    this.arrange(true);
  }

  /** The maximise button of `pane`: show it alone full width, or restore. */
  maximise(pane: Pane): void {
    if (this.maximised === pane) {
      this.restore();
    } else {
      if (this.maximised === null) {
        this.beforeMaximise = new Map(this.panes.map(p => [p, p.collapsed]));
      } else {
        this.maximised.setMaximised(false);
      }
      this.maximised = pane;
      for (const p of this.panes) {
        p.setCollapsed(p !== pane);
      }
      pane.setMaximised(true);
    }
    this.arrange(true);
  }

  private restore(): void {
    this.maximised?.setMaximised(false);
    this.maximised = null;
    for (const p of this.panes) {
      p.setCollapsed(this.beforeMaximise.get(p) ?? false);
    }
  }

  /** The code font's character width (px), measured in a pane body. */
  private measureChar(): number {
    const body = this.panes[0]?.body;
    if (!body) {
      return 8;
    }
    const probe = el('span', 'wl-measure', '0'.repeat(50));
    body.appendChild(probe);
    const width = probe.getBoundingClientRect().width / 50;
    probe.remove();
    return width > 0 ? width : 8;
  }

  /** What `pane` needs (px) to show `MIN_COLUMNS` columns, or all of its lines if fewer. */
  private need(pane: Pane): { px: number; flexible: boolean } {
    // gutter, heat columns, padding; a guess (5 columns) until the pane is laid out;
    // and a vertical scrollbar
    const chrome = (pane.chromeWidth() || 5 * this.charWidth) + 12;
    const columns = Math.max(pane.maxColumns, 1);
    if (pane.id === 'python' && columns < MIN_COLUMNS) {
      return { px: chrome + (columns + 2) * this.charWidth, flexible: false };
    }
    return { px: chrome + MIN_COLUMNS * this.charWidth, flexible: true };
  }

  /**
   * Put the panes in rows for the container's width. A width change alone keeps the
   * rows (and dragged widths) when the number a row does not change.
   */
  arrange(force: boolean): void {
    const width = this.container.clientWidth;
    if (width <= 0 || (!force && Math.abs(width - this.lastWidth) < 1)) {
      return;
    }
    this.lastWidth = width;
    if (this.panes.some(p => !p.node.isConnected)) {
      // first time: the panes in the page (in one row), so their gutters can be measured
      const row = el('div', 'wl-pane-row');
      this.panes.forEach(p => row.appendChild(p.node));
      this.container.appendChild(row);
      this.rows.push(row);
    }
    this.charWidth = this.measureChar();
    // a pane not laid out yet (an output the notebook draws later) is measured again
    // when it is: the observer watches the panes' bodies too
    this.unmeasured = this.panes.some(p => p.rows.length > 0 && p.chromeWidth() === 0);
    const open = this.panes.filter(p => !p.collapsed);
    const folded = this.panes.length - open.length;
    const available = width - folded * (34 + GAP_PX);
    // measured now, while the panes are in the page (the rows are rebuilt below)
    const needOf = new Map(this.panes.map(p => [p, this.need(p)]));
    const needs = open.map(p => needOf.get(p)!);
    const perRow = this.maximised !== null
      ? this.panes.length
      : panesPerRow(available, needs.map(n => n.px), needs.map(n => n.flexible));
    if (!force && perRow === this.perRow) {
      return;
    }
    this.perRow = perRow;
    this.weights.clear();
    // rows of `perRow` open panes; a folded pane rides in the row of the next open one
    const groups: Pane[][] = [[]];
    let inRow = 0;
    for (const pane of this.panes) {
      if (!pane.collapsed) {
        if (inRow === perRow) {
          groups.push([]);
          inRow = 0;
        }
        inRow += 1;
      }
      groups[groups.length - 1].push(pane);
    }
    for (const row of this.rows) {
      row.remove();
    }
    this.rows.length = 0;
    for (const group of groups) {
      const row = el('div', 'wl-pane-row');
      const openHere = group.filter(p => !p.collapsed);
      const room = available - Math.max(0, openHere.length - 1) * GAP_PX;
      const share = openHere.length > 0 ? room / openHere.length : room;
      const fixed = openHere.map(p => needOf.get(p)!).filter(n => !n.flexible)
        .reduce((sum, n) => sum + Math.min(n.px, share), 0);
      const shared = openHere.filter(p => needOf.get(p)!.flexible).length;
      const each = shared > 0 ? (room - fixed) / shared : share;
      for (const pane of group) {
        const need = needOf.get(pane)!;
        this.weights.set(pane, need.flexible || openHere.length === 1 ? Math.max(each, 1) : Math.min(need.px, share));
        row.appendChild(pane.node);
      }
      this.container.appendChild(row);
      this.rows.push(row);
    }
    this.applyWeights();
  }

  private applyWeights(): void {
    for (const row of this.rows) {
      const members = Array.from(row.children) as HTMLElement[];
      const panes = members.map(node => this.panes.find(p => p.node === node)!);
      const open = panes.filter(p => !p.collapsed);
      for (const pane of panes) {
        pane.node.style.flex = pane.collapsed ? '' : `${this.weights.get(pane) ?? 1} 1 0px`;
        pane.handle.hidden = pane.collapsed || open.indexOf(pane) === open.length - 1;
      }
    }
  }

  /** The open pane after `pane` in its row, or null. */
  private rightNeighbour(pane: Pane): Pane | null {
    const row = pane.node.parentElement;
    if (!row) {
      return null;
    }
    const members = (Array.from(row.children) as HTMLElement[])
      .map(node => this.panes.find(p => p.node === node)!)
      .filter(p => !p.collapsed);
    const at = members.indexOf(pane);
    return at >= 0 && at + 1 < members.length ? members[at + 1] : null;
  }

  /** Move `dx` px of width from the right neighbour of `pane` to it (negative: back). */
  private resize(pane: Pane, right: Pane, start: [number, number], dx: number): void {
    const [a, b] = start;
    const least = DRAG_MIN_COLUMNS * (this.charWidth || 8);
    const move = Math.max(least - a, Math.min(dx, b - least));
    // weights are proportional to width: set them to the new widths of the pair and
    // the others to their current widths, so nothing else moves
    const row = pane.node.parentElement!;
    for (const node of Array.from(row.children) as HTMLElement[]) {
      const p = this.panes.find(q => q.node === node)!;
      if (!p.collapsed) {
        this.weights.set(p, node.getBoundingClientRect().width);
      }
    }
    this.weights.set(pane, a + move);
    this.weights.set(right, b - move);
    this.applyWeights();
  }

  private wireHandle(pane: Pane): void {
    const handle = pane.handle;
    handle.addEventListener('pointerdown', (event: PointerEvent) => {
      const right = this.rightNeighbour(pane);
      if (right === null || event.button !== 0) {
        return;
      }
      event.preventDefault();
      const x0 = event.clientX;
      const start: [number, number] = [
        pane.node.getBoundingClientRect().width,
        right.node.getBoundingClientRect().width
      ];
      handle.setPointerCapture(event.pointerId);
      handle.classList.add('wl-dragging');
      const move = (e: PointerEvent) => this.resize(pane, right, start, e.clientX - x0);
      const up = () => {
        handle.removeEventListener('pointermove', move);
        handle.removeEventListener('pointerup', up);
        handle.removeEventListener('pointercancel', up);
        handle.classList.remove('wl-dragging');
      };
      handle.addEventListener('pointermove', move);
      handle.addEventListener('pointerup', up);
      handle.addEventListener('pointercancel', up);
    });
    handle.addEventListener('keydown', (event: KeyboardEvent) => {
      const right = this.rightNeighbour(pane);
      const step = event.key === 'ArrowLeft' ? -1 : event.key === 'ArrowRight' ? 1 : 0;
      if (right === null || step === 0) {
        return;
      }
      event.preventDefault();
      event.stopPropagation();  // not the panes' cursor keys
      const start: [number, number] = [
        pane.node.getBoundingClientRect().width,
        right.node.getBoundingClientRect().width
      ];
      this.resize(pane, right, start, step * KEY_STEP_COLUMNS * (this.charWidth || 8));
    });
  }
}
