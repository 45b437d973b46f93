import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { DRIVER_FLAGS } from '../../driver/config.js';

// docs/configuration.md documents every flag the driver accepts (ours and upstream's),
// in backticks as `--name` (or `-name`), so a new flag fails here until it is documented.

describe('docs/configuration.md', () => {
  const doc = readFileSync(fileURLToPath(new URL('../../../docs/configuration.md', import.meta.url)), 'utf8');
  it('names every flag of DRIVER_FLAGS', () => {
    const missing = Object.keys(DRIVER_FLAGS).filter(
      (name) => !doc.includes(`\`--${name}\``) && !doc.includes(`\`-${name}\``),
    );
    expect(missing).to.deep.equal([]);
  });
});
