/**
 * The MIME renderer widget for `application/vnd.warp-lab.kernel+json`: a
 * summary line, the resource card and the `--diff previous` table over the panes
 * the cell asked for (the bundle's `view`: `--show`/`--hide`, in their order, with
 * their titles), laid out by `layout.ts` and linked through the bundle's line map.
 * A bundle without `view` (from before it) shows the four panes and resource chips.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import type { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { BundleError, KernelBundle, MIME_TYPE, PaneId, PANE_IDS, parseBundle } from './bundle';
import { diffView, resourceCard } from './card';
import { el } from './dom';
import { PaneLayout } from './layout';
import { PANE_TOKENIZERS } from './languages';
import { LineLinks } from './linemap';
import { PaneLinker } from './linking';
import { HeatColumn, Pane } from './pane';
import { InstructionTooltip } from './tooltip';

const TITLES: Record<PaneId, string> = { python: 'Python', llvm: 'LLVM IR', ptx: 'PTX', sass: 'SASS' };

const SASS_INSTRUCTION = /^\s*(\/\*[0-9a-f]{4,}\*\/)\s*(@!?U?P\w+\s+)?(.*)$/;

/**
 * nvdisasm pads each instruction to fixed columns (about 30 blanks between
 * the address and the opcode); shown in a pane that padding hides the code.
 * Keep the address, a 4-character guard column and the instruction.
 */
export function compactSass(text: string): string {
  return text
    .split('\n')
    .map(line => {
      const m = SASS_INSTRUCTION.exec(line);
      if (m === null) {
        return line.replace(/^\s{2,}/, '  ');
      }
      return `${m[1]} ${(m[2] ?? '').trim().padEnd(4)} ${m[3]}`;
    })
    .join('\n');
}

/**
 * nvdisasm's `//## File "In[2]", line 5` before each group of instructions (from
 * `--print-line-info`): the line map is built from them (`compiler/linemap.sass_lines`)
 * and the pane's colours and links show the same Python line, so the pane hides them;
 * shown, they took every other row of a typical kernel's SASS.
 */
export function isSassFileComment(line: string): boolean {
  return /^\s*\/\/## File "/.test(line);
}

/** Whether `line` of nvdisasm's text is an instruction (it starts with its offset), what the SASS header counts. */
export function isSassInstruction(line: string): boolean {
  return SASS_INSTRUCTION.test(line);
}

function heatColumns(bundle: KernelBundle, pane: PaneId): HeatColumn[] {
  const columns: HeatColumn[] = [];
  const { instructions, liveRegisters } = bundle.heat;
  const perInstruction = bundle.paneHeat.sass.liveRegisters;
  if (pane === 'python' && instructions.size > 0) {
    columns.push({
      label: 'instr',
      unit: 'instructions executed',
      description: 'thread-instructions executed on this line',
      kind: 'instructions',
      values: instructions
    });
  }
  if (pane === 'python' && liveRegisters.size > 0) {
    columns.push({
      label: 'regs',
      unit: 'live registers at most',
      description: "live registers per thread: the most at any of this line's SASS instructions",
      kind: 'registers',
      values: liveRegisters
    });
  }
  if (pane === 'sass' && perInstruction.size > 0) {
    // nvdisasm's register life ranges at each instruction
    columns.push({
      label: 'regs',
      unit: 'live registers',
      description: 'live registers per thread at this instruction (nvdisasm life ranges)',
      kind: 'registers',
      values: perInstruction,
      byPaneLine: true
    });
  } else if (pane === 'sass' && liveRegisters.size > 0) {
    // an older bundle: only its Python line's most
    columns.push({
      label: 'regs',
      unit: "live registers at most on this instruction's Python line",
      description: "live registers per thread: the most on this instruction's Python line",
      kind: 'registers',
      values: liveRegisters
    });
  }
  return columns;
}

/**
 * Resource fields shown in the summary: [bundle key, label, label when 1,
 * shown when 0]. Byte counts are exact, as ptxas -v prints them (2048 B, not 2.0k B).
 */
const RESOURCE_FACTS: [string, string, string, boolean][] = [
  ['registers', 'registers/thread', 'register/thread', true],
  ['spill_stores', 'B spill stores', 'B spill stores', true],
  ['spill_loads', 'B spill loads', 'B spill loads', true],
  ['stack_frame', 'B stack frame', 'B stack frame', false],
  ['shared', 'B shared/block', 'B shared/block', false],
  ['local', 'B local/thread', 'B local/thread', false],
  ['barriers', 'barriers', 'barrier', false]
];

/** `value` with thousands separators: 49152 → "49,152". */
function exact(value: number): string {
  return value.toLocaleString('en-US');
}

/** One pane to show: its text's slot, the view's name and title, why it is absent. */
interface ShownPane {
  slot: PaneId;
  key: string;
  title: string;
  absent: string | null;
  /** Whether the LLVM pane gets the -O0 toggle (the unoptimised IR is in the view). */
  withVariant: boolean;
}

/**
 * The panes of the view, in order: the bundle's `view.panes` (a variant, the
 * unoptimised IR, is its base pane's toggle), or all four for an older bundle.
 */
export function shownPanes(bundle: KernelBundle): ShownPane[] {
  const view = bundle.view;
  if (view === null) {
    return PANE_IDS.map(id => ({ slot: id, key: id, title: TITLES[id], absent: null, withVariant: true }));
  }
  const out: ShownPane[] = [];
  const variants = new Set(view.panes.filter(p => p.variantOf !== null).map(p => p.variantOf));
  for (const p of view.panes) {
    if (p.variantOf !== null || !(PANE_IDS as string[]).includes(p.slot)) {
      continue;  // a variant is its base's toggle; a slot this renderer does not know
    }
    out.push({
      slot: p.slot as PaneId, key: p.key, title: p.title, absent: p.absent,
      withVariant: variants.has(p.key)
    });
  }
  return out;
}

function summary(bundle: KernelBundle): HTMLElement {
  const bar = el('div', 'wl-summary');
  bar.appendChild(el('span', 'wl-kernel-name', bundle.name));
  const facts: string[] = [];
  if (bundle.arch) {
    facts.push(bundle.arch);
  }
  if (bundle.opt !== null) {
    facts.push(`-O${bundle.opt}`);
  }
  facts.push(...bundle.flags);
  if (bundle.view !== null) {  // the resource card says the rest
    for (const fact of facts) {
      bar.appendChild(el('span', 'wl-chip', fact));
    }
    return bar;
  }
  for (const [key, label, one, showZero] of RESOURCE_FACTS) {
    const value = bundle.resources[key];
    if (typeof value === 'number' && (showZero || value !== 0)) {
      facts.push(`${exact(value)} ${value === 1 ? one : label}`);
    }
  }
  const occ = bundle.occupancy['occupancy'];
  if (typeof occ === 'number') {
    const block = bundle.occupancy['block_size'];
    const limiter = bundle.occupancy['limiter'];
    facts.push(
      `occupancy ${Math.round(occ * 100)}%` +
        (block !== undefined ? ` at ${block} threads/block` : '') +
        (limiter !== undefined ? `, limited by ${limiter}` : '')
    );
  }
  for (const fact of facts) {
    bar.appendChild(el('span', 'wl-chip', fact));
  }
  return bar;
}

/** Renders one bundle; JupyterLab creates one per output. */
export class KernelView extends Widget implements IRenderMime.IRenderer {
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this.addClass('wl-kernel-view');
    this.mimeType = options.mimeType;
  }

  readonly mimeType: string;

  /** Build the view from `model.data[MIME_TYPE]`; bad data shows an error line. */
  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this.paneLayout?.dispose();
    this.paneLayout = null;
    this.node.replaceChildren();
    let bundle: KernelBundle;
    try {
      bundle = parseBundle(model.data[MIME_TYPE]);
    } catch (error) {
      const why = error instanceof BundleError ? error.message : String(error);
      this.node.appendChild(el('div', 'wl-error', `warp_lab: cannot show this kernel bundle: ${why}`));
      return;
    }
    const links = new LineLinks(bundle);
    const panes = new Map<PaneId, Pane>();
    const order: Pane[] = [];
    const container = el('div', 'wl-panes');
    let layout: PaneLayout | null = null;
    for (const shown of shownPanes(bundle)) {
      const id = shown.slot;
      const text = bundle.panes[id];
      const unopt = bundle.llvmUnoptimized;
      const pane = new Pane({
        id,
        key: shown.key,
        title: shown.title,
        text: shown.absent !== null ? null : text.text,
        missing: shown.absent ?? text.missing,
        tokenizer: PANE_TOKENIZERS[id],
        links,
        heat: heatColumns(bundle, id),
        display: id === 'sass' ? compactSass : undefined,
        hideLine: id === 'sass' ? isSassFileComment : undefined,
        counted: id === 'sass' ? { unit: 'instructions', line: isSassInstruction } : undefined,
        firstLine: text.firstLine,
        numbers: text.shown ?? text.numbers,  // what the gutter shows; links use the keys
        subtitle: text.filename,
        variant:
          id === 'llvm' && unopt !== null && shown.withVariant
            ? { label: '-O0', title: 'Show the unoptimized LLVM IR (-O0)', text: unopt }
            : null,
        onCollapse: (p, collapsed) => layout?.collapsed(p, collapsed),
        onMaximise: p => layout?.maximise(p)
      });
      panes.set(id, pane);
      order.push(pane);
    }
    this.node.appendChild(summary(bundle));
    const view = bundle.view;
    if (view?.resources) {
      this.node.appendChild(resourceCard(view.resources));
    }
    if (view?.diff) {
      this.node.appendChild(diffView(view.diff));
    }
    this.node.appendChild(container);
    layout = new PaneLayout(container, order);
    this.paneLayout = layout;
    if (this.isAttached) {
      layout.attach();
    }
    const tooltip = new InstructionTooltip();
    this.node.appendChild(tooltip.node);
    const ptx = panes.get('ptx');
    if (ptx) {
      tooltip.attach(this.node, ptx.body);
    }
    new PaneLinker(panes, links).attach(this.node);
  }

  private paneLayout: PaneLayout | null = null;

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this.paneLayout?.attach();
  }

  protected onBeforeDetach(msg: Message): void {
    this.paneLayout?.dispose();
    super.onBeforeDetach(msg);
  }

  dispose(): void {
    this.paneLayout?.dispose();
    super.dispose();
  }
}
