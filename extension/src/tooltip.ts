/**
 * The PTX instruction tooltip: hovering an opcode in the PTX pane shows what
 * the instruction and each of its modifiers do, and the PTX ISA section.
 */
import { el } from './dom';
import { describeInstruction } from './ptxdocs';

/** A tooltip element living inside the view's root (which is positioned). */
export class InstructionTooltip {
  readonly node: HTMLElement;

  constructor() {
    this.node = el('div', 'wl-tooltip');
    this.node.setAttribute('role', 'tooltip');
    this.node.hidden = true;
  }

  /** Show the tooltip for opcodes under `pane`, positioned within `root`. */
  attach(root: HTMLElement, pane: HTMLElement): void {
    pane.addEventListener('mouseover', event => {
      const target = event.target instanceof Element ? event.target : null;
      const token = target?.closest<HTMLElement>('.wl-tok-keyword');
      if (token) {
        this.show(root, token);
      }
    });
    pane.addEventListener('mouseout', event => {
      const target = event.target instanceof Element ? event.target : null;
      if (target?.closest('.wl-tok-keyword')) {
        this.node.hidden = true;
      }
    });
  }

  private show(root: HTMLElement, token: HTMLElement): void {
    const doc = describeInstruction(token.textContent ?? '');
    if (doc === null) {
      this.node.hidden = true;
      return;
    }
    this.node.replaceChildren(
      el('div', 'wl-tooltip-title', token.textContent ?? ''),
      el('div', 'wl-tooltip-summary', doc.summary)
    );
    if (doc.modifiers.length > 0) {
      const list = el('dl', 'wl-tooltip-modifiers');
      for (const m of doc.modifiers) {
        list.appendChild(el('dt', undefined, `.${m.name}`));
        list.appendChild(el('dd', undefined, m.text));
      }
      this.node.appendChild(list);
    }
    this.node.appendChild(el('div', 'wl-tooltip-section', `PTX ISA: ${doc.section}`));
    const box = token.getBoundingClientRect();
    const origin = root.getBoundingClientRect();
    this.node.style.top = `${box.bottom - origin.top + 4}px`;
    this.node.hidden = false;
    // keep it inside the view: shift left when it would overflow the right edge
    const room = root.clientWidth - this.node.offsetWidth;
    this.node.style.left = `${Math.max(0, Math.min(box.left - origin.left, room))}px`;
  }
}
