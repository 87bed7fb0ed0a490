/**
 * The arrangement rule of the kernel view's panes (`layout.panesPerRow`) and the
 * bundle's `view` record (node:test; run with `jlpm test`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { BundleError, readView } from '../src/bundle';
import { panesPerRow } from '../src/layout';

// 70 columns of 8 px and 60 px of gutter: 620 px a pane
const NEED = 620;

test('four across when each gets its 70 columns, else two a row, else one', () => {
  const needs = [NEED, NEED, NEED, NEED];
  const flex = [true, true, true, true];
  assert.equal(panesPerRow(4 * NEED + 3 * 4, needs, flex), 4);
  assert.equal(panesPerRow(4 * NEED, needs, flex), 2);  // the gaps do not fit
  assert.equal(panesPerRow(2 * NEED + 4, needs, flex), 2);
  assert.equal(panesPerRow(2 * NEED, needs, flex), 1);
  assert.equal(panesPerRow(300, needs, flex), 1);
});

test('a short Python pane takes its width only and leaves the rest to the others', () => {
  // python needs 300 px for its longest line; three more at 620
  const needs = [300, NEED, NEED, NEED];
  const flex = [false, true, true, true];
  assert.equal(panesPerRow(300 + 3 * NEED + 12, needs, flex), 4);
  // as wide, a pane of 70 columns in its place would not fit four across
  assert.equal(panesPerRow(300 + 3 * NEED + 12, [NEED, NEED, NEED, NEED], [true, true, true, true]), 2);
  assert.equal(panesPerRow(1, [NEED], [true]), 1);
  assert.equal(panesPerRow(1, [], []), 1);
});

test('readView reads the panes, card and diff, and names a bad field', () => {
  const view = readView({
    panes: [
      { key: 'cuda', slot: 'python', title: 'CUDA C++', language: 'cuda', variant_of: null, open: true, absent: null },
      { key: 'llvm', slot: 'llvm', title: 'LLVM IR', language: 'llvm', variant_of: null, open: false, absent: 'NVRTC' }
    ],
    resources: { arch: 'sm_90', rows: [['registers / thread', '14']], warnings: ['spills'] },
    diff: { missing: 'no earlier compile of this kernel' }
  });
  assert.ok(view !== null);
  assert.deepEqual(view.panes.map(p => [p.key, p.slot, p.absent, p.open]),
    [['cuda', 'python', null, true], ['llvm', 'llvm', 'NVRTC', false]]);
  assert.deepEqual(view.resources, { arch: 'sm_90', rows: [['registers / thread', '14']], warnings: ['spills'] });
  assert.deepEqual(view.diff, { missing: 'no earlier compile of this kernel' });
  assert.equal(readView(undefined), null);
  assert.throws(() => readView({ panes: [{ key: 1 }] }), (e: Error) =>
    e instanceof BundleError && e.message === 'view.panes[0].key should be a string');
  assert.throws(() => readView({ panes: [], resources: { arch: 'x', rows: [['a']] } }), BundleError);
});
