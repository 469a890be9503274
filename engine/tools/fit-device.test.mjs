// engine/tools/fit-device.test.mjs - the committed device fit is what the
// script produces: regenerating the profiles from their recorded values
// (--eval, the engine run by engine/tools/fitdrv.c) gives the committed
// generated files byte for byte, so no hand edit and no stale RMS survives
// a change to the model. Run with `node --test engine/tools/`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const drv = join(root, 'build', 'native', 'fitdrv');

before(() => {
  const r = spawnSync('make', ['-s', '-C', join(root, 'engine'), 'fitdrv'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
});

test('fit-device --eval regenerates the committed profiles and points', () => {
  const out = mkdtempSync(join(tmpdir(), 'fit-device-'));
  try {
    const r = spawnSync('node', [join(root, 'engine/tools/fit-device.mjs'), '--eval', '--out', out], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    assert.equal(r.status, 0, r.stderr);
    for (const f of ['kernel/bdev_profiles.c', 'exp/bdev_points.c', 'exp/bdev_points.h'])
      assert.equal(readFileSync(join(out, f), 'utf8'), readFileSync(join(root, 'engine/src', f), 'utf8'),
        `engine/src/${f} differs from what fit-device.mjs --eval writes: rerun it and commit the result`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

function driver(input) {
  return spawnSync(drv, [], { input, encoding: 'utf8' });
}

test('the driver runs a candidate, and a changed parameter changes the run', () => {
  const run = 'run randread 4096 1 1 2000 3\n';
  const base = driver(`profile nvme-dc\n${run}`);
  assert.equal(base.status, 0, base.stderr);
  const [iops, p50, p99] = base.stdout.trim().split(' ').map(Number);
  assert.ok(iops > 0 && p50 > 0 && p99 >= p50, base.stdout);
  const slow = driver(`profile nvme-dc rd_op_ns=200000\n${run}`);
  assert.equal(slow.status, 0, slow.stderr);
  const [iops2, p502] = slow.stdout.trim().split(' ').map(Number);
  assert.ok(p502 > 2 * p50 && iops2 < iops / 2, `${base.stdout} vs ${slow.stdout}`);
  assert.equal(driver(`profile nvme-dc\n${run}`).stdout, base.stdout, 'same seed, same result');
});

test('the driver refuses bad input with one line and exit 2', () => {
  for (const input of ['profile nope\n', 'profile nvme-dc no_such_field=1\n', 'profile nvme-dc nunits=x\n',
    'run randread 4096 1 1 2000 3\n', 'profile nvme-dc\nrun randread 4096\n', 'bogus\n',
    'profile nvme-dc\nrun randread 4095 1 1 2000 3\n']) {
    const r = driver(input);
    assert.equal(r.status, 2, `${JSON.stringify(input)}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});

// The C test asserts seed 1's counts; a fit tuned to that one seed's luck
// (every fio run of a seed draws the same GC bands and stalls) would pass
// it and fail on the next. So the fit must also hold on other seeds: at
// the last refit seeds 2-5 gave 117, 113, 116 and 117 fitted points within
// 15% on all three, against 117 on seed 1.
test('the fit holds on other seeds, not only on the one the C test runs', () => {
  for (const seed of [2, 3, 4]) {
    const r = spawnSync('node', [join(root, 'engine/tools/fit-device.mjs'), '--eval', '--dry-run', '--seed', String(seed)], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    assert.equal(r.status, 0, r.stderr);
    const within = [...r.stdout.matchAll(/^\S+: \d+ fitted \((\d+) within 15% on all three\)/gm)].map((m) => Number(m[1]));
    assert.equal(within.length, 3, r.stdout);
    const total = within.reduce((a, b) => a + b, 0);
    assert.ok(total >= 113, `seed ${seed}: ${total} fitted points within 15% (at least 113 expected)\n${r.stdout}`);
  }
});
