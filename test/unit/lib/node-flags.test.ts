import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { missingNodeFlags, NODE_FLAGS, warnMissingNodeFlags } from '../../../lib/node-flags.js';

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));

describe('node flags of the driver and provider processes', () => {
  it('names the flags a command line lacks, by name', () => {
    expect(missingNodeFlags([])).to.deep.equal([...NODE_FLAGS]);
    expect(missingNodeFlags(['--cpu-prof', '--max-semi-space-size=4'])).to.deep.equal(['--heap-growing-percent=20']);
    // An operator's own value (either spelling) is tuning, not a forgotten flag.
    expect(missingNodeFlags(['--max_semi_space_size=2', '--heap-growing-percent=50'])).to.deep.equal([]);
    expect(missingNodeFlags(['--heap-growing-percent=20', '--cpu-prof', '--max-semi-space-size=4'])).to.deep.equal([]);
    expect(
      missingNodeFlags(['--heap-growing-percent=20'], ' --max-semi-space-size=8  --enable-source-maps'),
    ).to.deep.equal([]);
    expect(missingNodeFlags([], '--max-semi-space-size=8')).to.deep.equal(['--heap-growing-percent=20']);
  });

  it('warns with one line naming the missing flags, only when some are missing', () => {
    const warnings: [string, Record<string, unknown> | undefined][] = [];
    const logger = {
      warn: (message: string, meta?: Record<string, unknown>) => {
        warnings.push([message, meta]);
      },
    };
    warnMissingNodeFlags(logger, [...NODE_FLAGS], '');
    warnMissingNodeFlags(logger, [], NODE_FLAGS.join(' '));
    expect(warnings).to.deep.equal([]);
    warnMissingNodeFlags(logger, [], '');
    expect(warnings).to.have.length(1);
    expect(warnings[0]?.[0]).to.match(/started without the flags/);
    expect(warnings[0]?.[1]).to.deep.equal({ missingNodeFlags: [...NODE_FLAGS] });
  });

  it('the CLI shebang starts node with them (secrets-store-csi installed through npm)', () => {
    const firstLine = readFileSync(`${REPO}/bin/cli.ts`, 'utf8').split('\n')[0];
    expect(firstLine).to.equal(`#!/usr/bin/env -S node ${NODE_FLAGS.join(' ')}`);
  });
});
