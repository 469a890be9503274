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
    for (const f of ['bdev_profiles.c', 'bdev_points.c', 'bdev_points.h'])
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
