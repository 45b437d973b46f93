import { expect } from 'chai';
import { createLogger } from '../../../../lib/logging/logger.js';
import { logChangedObjects, mountedAsIs } from '../../../../providers/framework/object-versions.js';

describe('mountedAsIs (a Mount may answer with no files)', () => {
  const mounted = new Map([
    ['a', '1'],
    ['b', '2'],
  ]);
  const cases: [
    name: string,
    ids: string[],
    versions: (string | undefined)[],
    current: Map<string, string>,
    expected: boolean,
  ][] = [
    ['every version as mounted', ['a', 'b'], ['1', '2'], mounted, true],
    ['in another order', ['b', 'a'], ['2', '1'], mounted, true],
    ['one new version', ['a', 'b'], ['1', '3'], mounted, false],
    ['a version not known', ['a', 'b'], ['1', undefined], mounted, false],
    ['an object more than mounted', ['a', 'b', 'c'], ['1', '2', '3'], mounted, false],
    ['an object fewer than mounted', ['a'], ['1'], mounted, false],
    ['another object in place of a mounted one', ['a', 'c'], ['1', '2'], mounted, false],
    ['a first Mount (nothing mounted)', ['a', 'b'], ['1', '2'], new Map(), false],
    ['no objects, nothing mounted', [], [], new Map(), false],
  ];
  for (const [name, ids, versions, current, expected] of cases)
    it(`${name}: ${expected ? 'no files' : 'files'}`, () =>
      expect(mountedAsIs(ids, versions, current)).to.equal(expected));
});

describe('logChangedObjects', () => {
  type Versions = { id: string; version: string }[];
  const cases: [name: string, mounted: [string, string][], versions: Versions, expected: string[]][] = [
    ['a first Mount (nothing mounted)', [], [{ id: 'a', version: '1' }], []],
    ['nothing changed', [['a', '1']], [{ id: 'a', version: '1' }], []],
    [
      'one of two changed',
      [
        ['a', '1'],
        ['b', '1'],
      ],
      [
        { id: 'a', version: '1' },
        { id: 'b', version: '2' },
      ],
      ['b'],
    ],
    [
      'an object new to the class',
      [['a', '1']],
      [
        { id: 'a', version: '1' },
        { id: 'c', version: '1' },
      ],
      [],
    ],
    [
      'an object no longer answered',
      [
        ['a', '1'],
        ['gone', '1'],
      ],
      [{ id: 'a', version: '2' }],
      ['a'],
    ],
    ['a mounted empty version', [['a', '']], [{ id: 'a', version: '1' }], ['a']],
    [
      'in the order answered',
      [
        ['b', '1'],
        ['a', '1'],
      ],
      [
        { id: 'a', version: '2' },
        { id: 'b', version: '2' },
      ],
      ['a', 'b'],
    ],
  ];
  for (const [name, mounted, versions, expected] of cases) {
    it(`${name}: ${JSON.stringify(expected)}`, () => {
      const logged: unknown[] = [];
      const logger = createLogger({ component: 'test', silent: true });
      logger.info = (message, fields) => logged.push([message, fields]);
      logChangedObjects(logger, new Map(mounted), versions);
      expect(logged).to.deep.equal(expected.map((objectName) => ['object changed', { objectName }]));
    });
  }

  it('names the field as asked (azure: objectId, its ids are not file names)', () => {
    const logged: unknown[] = [];
    const logger = createLogger({ component: 'test', silent: true });
    logger.info = (message, fields) => logged.push([message, fields]);
    logChangedObjects(logger, new Map([['secret/db', 'v1']]), [{ id: 'secret/db', version: 'v2' }], 'objectId');
    expect(logged).to.deep.equal([['object changed', { objectId: 'secret/db' }]]);
  });
});
