import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NODE_FLAGS } from '../../lib/node-flags.js';
import { REPO } from '../support/deploy-manifests.js';

// Static checks of the Dockerfiles: no Docker engine here, so these assert the facts a
// broken image would get wrong.

interface Instruction {
  stage: string;
  op: string;
  args: string;
}

/** Instructions with their stage name (continuation lines joined, comments dropped). */
function parseDockerfile(path: string): Instruction[] {
  const text = readFileSync(path, 'utf8').replace(/\\\r?\n/g, ' ');
  const out: Instruction[] = [];
  let stage = '';
  let n = 0;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(\S+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const op = (m[1] as string).toUpperCase();
    const args = (m[2] as string).trim();
    if (op === 'FROM') {
      stage = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? `stage${n}`;
      n++;
    }
    out.push({ stage, op, args });
  }
  return out;
}

/** Sources and --from of a COPY (shell form). */
function copySources(args: string): { from: string | undefined; sources: string[] } {
  const words = args.split(/\s+/);
  const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
  const paths = words.filter((w) => !w.startsWith('--'));
  return { from, sources: paths.slice(0, -1) };
}

/** .dockerignore patterns (Go filepath.Match per path element; ** for any depth). */
function dockerIgnored(path: string, patterns: readonly string[]): boolean {
  const clean = path.replace(/^\.?\//, '').replace(/\/$/, '');
  const parts = clean.split('/');
  const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const raw of patterns) {
    const negate = raw.startsWith('!');
    const pattern = (negate ? raw.slice(1) : raw).replace(/^\//, '').replace(/\/$/, '');
    const re = new RegExp(
      `^${pattern
        .split('/')
        .map((seg) =>
          seg === '**'
            ? '.*'
            : seg
                .replace(/[.+^${}()|[\]\\]/g, '\\$&')
                .replace(/\*/g, '[^/]*')
                .replace(/\?/g, '[^/]'),
        )
        .join('/')
        .replace(/\.\*\//g, '(?:.*/)?')}$`,
    );
    if (candidates.some((c) => re.test(c))) ignored = !negate;
  }
  return ignored;
}

const DOCKERIGNORE = readFileSync(join(REPO, '.dockerignore'), 'utf8')
  .split(/\r?\n/)
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));
/** Produced inside the builder by `npm ci` / `npm run build`, never in the build context. */
const BUILT = ['dist', 'build', 'node_modules'];

/** The Node.js version .ci/install-node pins for CI: the images must use the same. */
const CI_NODE_VERSION =
  /^NODE_VERSION=(\S+)$/m.exec(readFileSync(join(REPO, '.ci/install-node'), 'utf8'))?.[1] ?? 'missing';

describe('deploy Dockerfiles (static: no Docker engine here)', () => {
  it('CI and the images pin an exact Node.js 24 LTS version (Node 20 is past end of life)', () => {
    expect(CI_NODE_VERSION).to.match(/^24\.\d+\.\d+$/);
  });

  it('.dockerignore keeps local builds and dependencies out of the context', () => {
    for (const p of ['node_modules', 'dist', 'build', '.git', 'driver/node_modules'])
      expect(dockerIgnored(p, DOCKERIGNORE), p).to.equal(true);
    for (const p of ['package.json', 'driver/config.ts', 'proto/csi/csi.proto'])
      expect(dockerIgnored(p, DOCKERIGNORE), p).to.equal(false);
  });

  for (const [file, command, user] of [
    ['Dockerfile.driver', 'driver', undefined],
    ['Dockerfile.provider', 'provider', '65532:65532'],
  ] as const) {
    describe(file, () => {
      const instructions = parseDockerfile(join(REPO, file));

      it('copies from the context only paths that exist and are not in .dockerignore', () => {
        const copies = instructions.filter((i) => i.op === 'COPY' || i.op === 'ADD');
        expect(copies.length).to.be.greaterThan(0);
        for (const i of copies) {
          expect(i.op, 'COPY, not ADD').to.equal('COPY');
          const { from, sources } = copySources(i.args);
          if (from !== undefined) continue;
          for (const s of sources) {
            expect(existsSync(join(REPO, s)), `${file}: COPY ${s} exists in the repo`).to.equal(true);
            expect(dockerIgnored(s, DOCKERIGNORE), `${file}: COPY ${s} is excluded by .dockerignore`).to.equal(false);
          }
        }
      });

      it('copies from the builder only what the repo holds or the build produces', () => {
        const stages = new Set(instructions.map((i) => i.stage));
        for (const i of instructions.filter((x) => x.op === 'COPY')) {
          const { from, sources } = copySources(i.args);
          if (from === undefined) continue;
          expect(stages, `--from=${from} names a stage`).to.include(from);
          for (const s of sources) {
            expect(s.startsWith('/app/'), `${s} is under the builder's WORKDIR /app`).to.equal(true);
            const rel = s.slice('/app/'.length).replace(/\/$/, '');
            const produced = BUILT.some((b) => rel === b || rel.startsWith(`${b}/`));
            expect(produced || existsSync(join(REPO, rel)), `${file}: COPY --from=${from} ${s}`).to.equal(true);
          }
        }
      });

      it('builds with the sources tsc and node-gyp read', () => {
        const copied = instructions
          .filter((i) => i.stage === 'builder' && i.op === 'COPY')
          .flatMap((i) => copySources(i.args).sources.map((s) => s.replace(/\/$/, '')));
        const tsconfig = JSON.parse(readFileSync(join(REPO, 'tsconfig.json'), 'utf8')) as { include: string[] };
        const roots = [...new Set(tsconfig.include.map((p) => p.split('/')[0] as string))].filter(
          (r) => r !== 'test' && r !== 'bench',
        );
        for (const r of [
          ...roots,
          'package.json',
          'package-lock.json',
          'tsconfig.json',
          'binding.gyp',
          'scripts/build-native.mjs',
          'native',
        ]) {
          expect(copied, `${file}: the builder copies ${r}`).to.include(r);
        }
        const runs = instructions
          .filter((i) => i.stage === 'builder' && i.op === 'RUN')
          .map((i) => i.args)
          .join(' && ');
        expect(runs).to.match(/npm ci\b/);
        expect(runs).to.match(/npm run build\b/);
        expect(runs).to.match(/npm prune --omit=dev\b/);
      });

      it(`runs \`node ${NODE_FLAGS.join(' ')} /app/dist/bin/cli.js ${command}\` from node:${CI_NODE_VERSION}-bookworm-slim, the Node.js CI runs on`, () => {
        const froms = instructions.filter((i) => i.op === 'FROM').map((i) => i.args.split(/\s+/)[0]);
        expect(froms).to.deep.equal([`node:${CI_NODE_VERSION}-bookworm`, `node:${CI_NODE_VERSION}-bookworm-slim`]);
        const entrypoint = instructions.filter((i) => i.op === 'ENTRYPOINT').pop();
        expect(JSON.parse(entrypoint?.args ?? 'null')).to.deep.equal([
          'node',
          ...NODE_FLAGS,
          '/app/dist/bin/cli.js',
          command,
        ]);
        expect(existsSync(join(REPO, 'bin/cli.ts'))).to.equal(true);
        const lastUser = instructions.filter((i) => i.op === 'USER' && i.stage !== 'builder').pop()?.args;
        if (user === undefined)
          expect(lastUser === undefined || /^(0|root)(:0|:root)?$/.test(lastUser), 'the driver runs as root').to.equal(
            true,
          );
        else expect(lastUser).to.equal(user);
      });
    });
  }

  it("the provider image keeps the vault provider's node-vault: a production dependency, only dev ones pruned", () => {
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.dependencies, 'package.json dependencies').to.have.property('node-vault');
    expect(pkg.devDependencies ?? {}).to.not.have.property('node-vault');
    const instructions = parseDockerfile(join(REPO, 'Dockerfile.provider'));
    const prune = instructions
      .filter((i) => i.stage === 'builder' && i.op === 'RUN' && /npm prune/.test(i.args))
      .map((i) => i.args);
    expect(prune).to.deep.equal(['npm prune --omit=dev']);
    const runtime = instructions
      .filter((i) => i.stage !== 'builder' && i.op === 'COPY')
      .flatMap((i) => copySources(i.args).sources.map((s) => s.replace(/\/$/, '')));
    expect(runtime).to.include('/app/node_modules');
    expect(readFileSync(join(REPO, 'Dockerfile.provider'), 'utf8')).to.match(/^#.*`vault`/m);
  });

  it("the provider image keeps the azure provider's Azure SDK and everything it loads: production dependencies, none dev-only, none native", () => {
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    const sdk = ['@azure/identity', '@azure/keyvault-secrets', '@azure/keyvault-keys', '@azure/keyvault-certificates'];
    for (const name of sdk) {
      expect(pkg.dependencies, 'package.json dependencies').to.have.property(name);
      expect(pkg.devDependencies ?? {}).to.not.have.property(name);
    }
    // What npm prune --omit=dev keeps: the lock's packages without "dev": the SDK's own
    // dependencies too (an SDK package marked dev would be pruned from the image).
    const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean; hasInstallScript?: boolean; dependencies?: Record<string, string> }>;
    };
    const kept = (name: string) => lock.packages[`node_modules/${name}`];
    const seen = new Set<string>();
    const walk = (name: string): void => {
      if (seen.has(name)) return;
      seen.add(name);
      const entry = kept(name);
      expect(entry, `${name} is in package-lock.json`).to.not.equal(undefined);
      expect(entry?.dev, `${name} is not dev-only`).to.not.equal(true);
      expect(
        entry?.hasInstallScript,
        `${name} builds nothing at install (the runtime image has no toolchain)`,
      ).to.not.equal(true);
      for (const dep of Object.keys(entry?.dependencies ?? {})) if (dep.startsWith('@azure')) walk(dep);
    };
    for (const name of sdk) walk(name);
    expect(readFileSync(join(REPO, 'Dockerfile.provider'), 'utf8')).to.match(/^#.*`azure`/m);
  });

  it("the provider image keeps Debian slim's /bin/sh and essential tools for the exec provider's helpers, and names every provider", () => {
    const instructions = parseDockerfile(join(REPO, 'Dockerfile.provider'));
    const runtime = instructions.filter((i) => i.stage !== 'builder');
    // bookworm-slim: dash as /bin/sh, coreutils, grep and sed are Essential packages.
    expect(runtime.find((i) => i.op === 'FROM')?.args).to.match(/^node:\S+-bookworm-slim$/);
    // The runtime stage removes only npm, npx, corepack and yarn: nothing a helper calls.
    for (const run of runtime.filter((i) => i.op === 'RUN')) {
      const removed = run.args.split(/\s+/).filter((w) => w.startsWith('/'));
      for (const path of removed)
        expect(path, `RUN ${run.args}`).to.match(
          /^\/usr\/local\/(lib\/node_modules\/(npm|corepack)|bin\/(npm|npx|corepack))$|^\/opt\/yarn-\*$/,
        );
    }
    const text = readFileSync(join(REPO, 'Dockerfile.provider'), 'utf8');
    for (const name of ['file', 'vault', 'azure', 'exec', 'pki'])
      expect(text).to.match(new RegExp(`^#.*\`${name}\``, 'm'));
  });

  it('the driver image carries the .proto files and the mount addon where the code loads them', () => {
    const runtime = parseDockerfile(join(REPO, 'Dockerfile.driver'))
      .filter((i) => i.stage !== 'builder' && i.op === 'COPY')
      .flatMap((i) => copySources(i.args).sources.map((s) => s.replace(/\/$/, '')));
    for (const p of ['/app/dist', '/app/node_modules', '/app/package.json', '/app/proto/csi', '/app/proto/provider'])
      expect(runtime).to.include(p);
    expect(runtime.some((s) => s.startsWith('/app/build/Release'))).to.equal(true);
  });
});
