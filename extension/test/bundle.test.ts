/**
 * Bundle validation, the line links and the PTX instruction table
 * (node:test; run with `jlpm test`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { BundleError, parseBundle } from '../src/bundle';
import { LineLinks } from '../src/linemap';
import { describeInstruction } from '../src/ptxdocs';

function sample(): Record<string, unknown> {
  return {
    version: 1,
    name: 'saxpy',
    arch: 'sm_90',
    opt: 3,
    panes: {
      python: { text: 'def saxpy(a):\n    i = wl.tid()\n    y[i] = a', first_line: 12 },
      llvm: { text: 'a\nb\nc' },
      ptx: { text: 'p1\np2\np3\np4' },
      sass: { text: null, missing: 'no nvdisasm' }
    },
    line_map: { llvm: { '13': [1, 2] }, ptx: { '13': [2, 3], '14': [3], '0': [4] }, sass: {} },
    colors: { '13': '#e6194b33', '14': 'url(javascript:alert(1))' },
    heat: { instructions: { '14': 4096 } }
  };
}

test('a valid bundle is read with typed maps; line 0 is dropped', () => {
  const b = parseBundle(sample());
  assert.equal(b.panes.python.firstLine, 12);
  assert.equal(b.panes.sass.text, null);
  assert.equal(b.panes.sass.missing, 'no nvdisasm');
  assert.deepEqual([...b.lineMap.ptx.entries()], [
    [13, [2, 3]],
    [14, [3]]
  ]);
  assert.equal(b.heat.instructions.get(14), 4096);
  assert.equal(b.llvmUnoptimized, null);
});

test('only hex colours are kept', () => {
  const b = parseBundle(sample());
  assert.deepEqual([...b.colors.entries()], [[13, '#e6194b33']]);
});

test('malformed bundles raise BundleError naming the field', () => {
  assert.throws(() => parseBundle([]), BundleError);
  assert.throws(() => parseBundle({ ...sample(), version: 2 }), /unsupported bundle version 2/);
  const badMap = { ...sample(), line_map: { ptx: { '13': 'forty' } } };
  assert.throws(() => parseBundle(badMap), /line_map\.ptx\["13"\] should be a list of line numbers/);
  const badKey = { ...sample(), line_map: { ptx: { x: [1] } } };
  assert.throws(() => parseBundle(badKey), /line key "x" is not a line number/);
  const badText = { ...sample(), panes: { python: { text: 3 } } };
  assert.throws(() => parseBundle(badText), /panes\.python\.text should be a string or null/);
});

test('line links go both ways; the python pane is offset by first_line', () => {
  const links = new LineLinks(parseBundle(sample()));
  assert.deepEqual(links.paneLinesOf('ptx', 13), [2, 3]);
  assert.deepEqual(links.pythonLinesOf('ptx', 3), [13, 14]);
  assert.deepEqual(links.pythonLinesOf('python', 2), [13]);
  assert.deepEqual(links.paneLinesOf('python', 14), [3]);
  assert.deepEqual(links.pythonLinesOf('sass', 1), []);
  assert.equal(links.colorOf(13), '#e6194b33');
  // line 14 had an unsafe colour: it gets one from the palette instead
  assert.match(links.colorOf(14) ?? '', /^#[0-9a-f]{8}$/);
  assert.equal(links.colorOfPaneLine('ptx', 2), '#e6194b33');
  assert.equal(links.colorOf(15), null);
});

test('PTX instruction docs: sections by operand type, opcode-specific modifiers', () => {
  const mul = describeInstruction('mul.wide.s32');
  assert.equal(mul?.section, 'Integer Arithmetic Instructions: mul');
  assert.deepEqual(mul?.modifiers, [
    { name: 'wide', text: 'result twice as wide as the inputs' },
    { name: 's32', text: '32-bit signed integer' }
  ]);
  assert.equal(describeInstruction('fma.rn.f32')?.section, 'Floating-Point Instructions: fma');
  assert.equal(describeInstruction('add.rn.f32')?.section, 'Floating-Point Instructions: add');
  assert.equal(describeInstruction('add.s64')?.section, 'Integer Arithmetic Instructions: add');
  const setp = describeInstruction('setp.lt.and.s32');
  assert.equal(setp?.modifiers[1].text, 'combine the comparison with a predicate operand by AND');
  const atom = describeInstruction('atom.global.and.b32');
  assert.equal(atom?.modifiers[1].text, 'operation: AND');
  assert.equal(describeInstruction('bar.sync')?.modifiers[0].text, 'arrive and wait');
  assert.equal(describeInstruction('shfl.sync.bfly.b32')?.section,
    'Data Movement and Conversion Instructions: shfl');
  assert.equal(describeInstruction('f16x2.foo'), null);
  assert.equal(describeInstruction('cvt.rn.f16x2.f32')?.modifiers[1].text, '16-bit IEEE floating point, packed pair');
});
