import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseSecretProviderClass } from '../../driver/spc/secret-provider-class.js';
import { parseGoDuration } from '../../lib/duration.js';
import { stringFlag } from '../../lib/flags.js';
import {
  container,
  DEPLOY,
  DRIVER_DS,
  EXEC_PROVIDER_DS,
  find,
  CSI_DRIVER_NAME,
  MANIFESTS,
  PKI_PROVIDER_DS,
  volumeFileOf,
  type Obj,
} from '../support/deploy-manifests.js';
import {
  checkExecProviderDaemonSet,
  EXEC_PROVIDER_NAME,
  execProviderArgs,
} from '../support/exec-provider-daemonset.js';
import { checkPkiProviderDaemonSet, PKI_PROVIDER_NAME, pkiProviderArgs } from '../support/pki-provider-daemonset.js';
import { parseExecParameters } from '../../providers/exec/parameters.js';
import { parseCertificateRequest } from '../../providers/pki/parameters.js';
import { pkiSettings } from '../../providers/pki/settings.js';

// Static checks of deploy/'s exec and pki providers (opt-in) and deploy/examples/{exec,pki}
// against the providers' flag tables and class parameters. The chart's rendering:
// test/integration/helm-chart-render.test.ts.
// The example classes are also read with the providers' own parsers (parseExecParameters,
// parseCertificateRequest with the DaemonSet's --min-duration).

/** A helper's file name (docs/providers/exec.md: `helper`). */
const HELPER_NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** A helper parameter's name (passed as SSC_PARAM_<NAME>). */
const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** The pki provider's parameters (docs/providers/pki.md#parameters). */
const PKI_PARAMETERS = [
  'commonName',
  'dnsNames',
  'ipAddresses',
  'uris',
  'usages',
  'keyAlgorithm',
  'duration',
  'keyFilePermission',
];
const PKI_TEMPLATES = ['POD_NAME', 'POD_NAMESPACE', 'SERVICE_ACCOUNT_NAME', 'POD_UID'];
const PKI_KEY_ALGORITHMS = ['ECDSA-P256', 'RSA-2048', 'RSA-4096', 'Ed25519'];
/** The attributes the driver adds to a Mount's parameters (podInfoOnMount), not the class's. */
const POD_ATTRIBUTES = /^csi\.storage\.k8s\.io\//;

const kustomizationText = () => readFileSync(join(DEPLOY, 'kustomization.yaml'), 'utf8');
const execDsText = () => readFileSync(join(DEPLOY, 'provider-exec-daemonset.yaml'), 'utf8');

/** deploy/'s exec DaemonSet as its comments say to switch it to a hostPath of helpers. */
function execDaemonSetWithHostPath(): Obj {
  const lines = execDsText().split('\n');
  const start = lines.indexOf('        # - name: helpers');
  expect(start, 'the commented hostPath helpers volume').to.be.greaterThan(0);
  let end = start + 1;
  while (/^ {8}# {3}/.test(lines[end] as string)) end++;
  const volume = (
    parse(
      lines
        .slice(start, end)
        .map((l) => l.replace(/^ {8}# /, ''))
        .join('\n'),
    ) as Obj[]
  )[0] as Obj;
  const ds = structuredClone(EXEC_PROVIDER_DS());
  const spec = ds['spec'].template.spec as Obj;
  spec['volumes'] = (spec['volumes'] as Obj[]).map((v) => (v['name'] === 'helpers' ? volume : v));
  const c = container(ds, 'provider');
  const hint = /With the hostPath volume\s+#\s+below: (--helpers-dir=\S+)/.exec(execDsText())?.[1];
  expect(hint, 'the comment names --helpers-dir for the hostPath').to.be.a('string');
  c['args'] = (c['args'] as string[]).map((a) => (a.startsWith('--helpers-dir=') ? (hint as string) : a));
  return ds;
}

describe('deploy: exec provider (opt-in)', () => {
  it('is listed commented in kustomization.yaml', () => {
    expect(kustomizationText()).to.match(/^ {2}# - provider-exec-daemonset\.yaml$/m);
  });

  it('passes flags the exec provider accepts, serves exec.sock where the driver looks, runs helpers from the ConfigMap at mode 0555, its key from exec-provider-hmac-key', () => {
    checkExecProviderDaemonSet(EXEC_PROVIDER_DS(), DRIVER_DS(), {
      helpers: {
        kind: 'configMap',
        name: 'csi-secrets-store-provider-exec-helpers',
        filesConfigMap: { name: 'csi-secrets-store-provider-exec-helper-files', paths: ['file-get.d/greeting.txt'] },
      },
      hmacSecret: { name: 'exec-provider-hmac-key', key: 'key' },
      helperTimeout: '10s',
      maxOutputBytes: 1024 * 1024,
      maxConcurrentHelpers: 8,
      healthPort: 8991,
    });
  });

  it('with the commented hostPath volume and --helpers-dir of its comment, reads helpers from the host directory', () => {
    const ds = execDaemonSetWithHostPath();
    checkExecProviderDaemonSet(ds, DRIVER_DS(), {
      helpers: { kind: 'hostPath', path: '/etc/secrets-store-csi/helpers' },
      hmacSecret: { name: 'exec-provider-hmac-key', key: 'key' },
      helperTimeout: '10s',
      maxOutputBytes: 1024 * 1024,
      maxConcurrentHelpers: 8,
      healthPort: 8991,
    });
  });

  it('documents the command that creates the HMAC key Secret it mounts', () => {
    expect(execDsText()).to.include('kubectl -n kube-system create secret generic exec-provider-hmac-key');
    expect(execDsText()).to.include('--from-file=key=<(head -c 32 /dev/urandom)');
  });
});

describe('deploy/examples/exec', () => {
  const helpers = () => find('ConfigMap', 'csi-secrets-store-provider-exec-helpers').obj;
  const helperFiles = () => find('ConfigMap', 'csi-secrets-store-provider-exec-helper-files').obj;
  const projectedSources = (): Obj[] => {
    const ds = EXEC_PROVIDER_DS();
    const f = volumeFileOf(ds, container(ds, 'provider'), stringFlag(execProviderArgs(ds), 'helpers-dir'));
    return f.volume['projected'].sources as Obj[];
  };
  const spc = () => parseSecretProviderClass(find('SecretProviderClass', 'exec-demo').obj);
  const objects = () =>
    parse(spc().parameters['objects'] ?? '') as {
      objectName: string;
      helper: string;
      parameters?: Record<string, string>;
    }[];

  it('the helpers ConfigMaps are those the DaemonSet mounts, in its namespace, every helper a plain file name running under /bin/sh', () => {
    const ns = EXEC_PROVIDER_DS()['metadata'].namespace;
    expect([helpers()['metadata'].namespace, helperFiles()['metadata'].namespace]).to.deep.equal([ns, ns]);
    const sources = projectedSources();
    expect(sources.map((s) => s['configMap']?.name)).to.deep.equal([
      helpers()['metadata'].name,
      helperFiles()['metadata'].name,
    ]);
    for (const [name, text] of Object.entries(helpers()['data'] as Record<string, string>)) {
      expect(name, name)
        .to.match(HELPER_NAME)
        .and.not.match(/^\.\.?$/);
      // The provider image has /bin/sh (Dockerfile.provider, dockerfiles.test.ts).
      expect(text.split('\n')[0], `${name}: a script for the image's /bin/sh`).to.equal('#!/bin/sh');
    }
    // Every helper file is projected, and every projected item exists.
    const items = (sources[1]?.['configMap'].items ?? []) as Obj[];
    expect(items.map((i) => i['key']).sort()).to.deep.equal(Object.keys(helperFiles()['data'] as object).sort());
  });

  it('the class is valid for the driver: each object names a helper of the ConfigMap with parameter names it can pass, and file-get.sh a file it serves', () => {
    const s = spc();
    expect(s.provider).to.equal(EXEC_PROVIDER_NAME);
    const helperNames = Object.keys(helpers()['data'] as object);
    const served = ((projectedSources()[1]?.['configMap'].items ?? []) as Obj[]).map((i) => String(i['path']));
    const list = objects();
    expect(list.length).to.be.greaterThan(0);
    for (const o of list) {
      expect(helperNames, o.objectName).to.include(o.helper);
      for (const name of Object.keys(o.parameters ?? {}))
        expect(name, `${o.objectName}: parameter`).to.match(PARAMETER_NAME);
      if (o.helper === 'file-get.sh')
        expect(served, `${o.objectName}: file-get.d/${o.parameters?.['path']}`).to.include(
          `file-get.d/${o.parameters?.['path']}`,
        );
    }
    expect(
      list.some((o) => o.helper === 'file-get.sh'),
      'a class using examples/helpers/file-get.sh',
    ).to.equal(true);
    expect(s.secretObjects.length).to.be.greaterThan(0);
    for (const so of s.secretObjects)
      for (const d of so.data) expect(list.map((o) => o.objectName)).to.include(d.objectName);
  });

  it("the class parses with the exec provider's own parser, and file-get.sh is examples/helpers/file-get.sh verbatim", () => {
    const parsed = parseExecParameters(spc().parameters);
    expect(parsed.warnings).to.deep.equal([]);
    expect(parsed.objects.map((o) => [o.objectName, o.helper])).to.deep.equal(
      objects().map((o) => [o.objectName, o.helper]),
    );
    expect(helpers()['data']['file-get.sh']).to.equal(
      readFileSync(join(DEPLOY, '../examples/helpers/file-get.sh'), 'utf8'),
    );
  });

  it('the pod mounts exec-demo read-only in its namespace and reads the synced Secret', () => {
    const pod = find('Pod', 'exec-demo').obj;
    expect(pod['metadata'].namespace).to.equal(spc().namespace);
    const volume = (pod['spec'].volumes as Obj[]).find((v) => v['csi']);
    expect(volume?.['csi']).to.deep.include({ driver: CSI_DRIVER_NAME, readOnly: true });
    expect(volume?.['csi'].volumeAttributes).to.deep.equal({ secretProviderClass: 'exec-demo' });
    const ref = (pod['spec'].containers[0].env as Obj[])[0]?.['valueFrom'].secretKeyRef as Obj;
    const synced = spc().secretObjects.find((so) => so.secretName === ref['name']);
    expect(synced?.data.map((d) => d.key)).to.include(ref['key']);
  });

  it('README.md lists every file of the example', () => {
    const readme = readFileSync(join(DEPLOY, 'examples/exec/README.md'), 'utf8');
    const listed = [...readme.matchAll(/^\| `([^`]+\.yaml)` \|/gm)].map((x) => x[1]).sort();
    const files = [
      ...new Set(
        MANIFESTS.filter((x) => x.file.startsWith('examples/exec/')).map((x) => x.file.slice('examples/exec/'.length)),
      ),
    ].sort();
    expect(listed).to.deep.equal(files);
  });
});

describe('deploy: pki provider (opt-in)', () => {
  it('is listed commented in kustomization.yaml', () => {
    expect(kustomizationText()).to.match(/^ {2}# - provider-pki-daemonset\.yaml$/m);
  });

  it('passes flags the pki provider accepts, serves pki.sock where the driver looks, and holds nothing but its socket', () => {
    checkPkiProviderDaemonSet(PKI_PROVIDER_DS(), DRIVER_DS(), { minDuration: '1h', healthPort: 8992 });
  });
});

describe('deploy/examples/pki', () => {
  const spc = () => parseSecretProviderClass(find('SecretProviderClass', 'pki-demo').obj);
  const pod = () => find('Pod', 'pki-demo').obj;

  it('the class asks for a templated commonName, dnsNames, usages, keyAlgorithm and a duration the DaemonSet allows', () => {
    const s = spc();
    expect(s.provider).to.equal(PKI_PROVIDER_NAME);
    const p = s.parameters;
    for (const name of Object.keys(p).filter((k) => !POD_ATTRIBUTES.test(k)))
      expect(PKI_PARAMETERS, name).to.include(name);
    for (const name of ['commonName', 'dnsNames', 'usages', 'keyAlgorithm', 'duration'])
      expect(p[name], name).to.be.a('string').and.not.equal('');
    expect(p['commonName']).to.include('${POD_NAME}');
    for (const name of ['commonName', 'dnsNames', 'uris']) {
      for (const m of (p[name] ?? '').matchAll(/\$\{([^}]*)\}/g))
        expect(PKI_TEMPLATES, `${name}: \${${m[1]}}`).to.include(m[1]);
    }
    expect(PKI_KEY_ALGORITHMS).to.include(p['keyAlgorithm']);
    for (const u of (p['usages'] ?? '').split(',')) expect(['server', 'client']).to.include(u.trim());
    const minDuration = parseGoDuration(stringFlag(pkiProviderArgs(PKI_PROVIDER_DS()), 'min-duration'));
    const duration = parseGoDuration(p['duration'] ?? '');
    expect(duration, "duration ≥ the DaemonSet's --min-duration").to.be.at.least(minDuration);
    expect(duration, 'duration ≤ one year').to.be.at.most(8760 * 3600_000);
  });

  it("the class parses with the pki provider's own parser for the example pod, within the DaemonSet's --min-duration", () => {
    const p = pod();
    const attributes = {
      ...spc().parameters,
      'csi.storage.k8s.io/pod.name': p['metadata'].name,
      'csi.storage.k8s.io/pod.namespace': p['metadata'].namespace,
      'csi.storage.k8s.io/serviceAccount.name': p['spec'].serviceAccountName,
      'csi.storage.k8s.io/pod.uid': '0b6c1c1e-1f1a-4a7e-9a57-3f3c1f3c1f3c',
    };
    const request = parseCertificateRequest(attributes, pkiSettings(pkiProviderArgs(PKI_PROVIDER_DS())));
    expect(request.commonName).to.equal('pki-demo.default');
    expect(request.dnsNames).to.include('pki-demo.default.svc');
    expect(request.uris).to.deep.equal(['spiffe://cluster.local/ns/default/sa/pki-demo']);
    expect(request.usages).to.deep.equal(['server', 'client']);
    expect(request.keyFilePermission).to.equal(0o640);
  });

  it('syncs a kubernetes.io/tls Secret from tls.crt and tls.key (and the bundle as ca.crt), files the provider writes', () => {
    const tls = spc().secretObjects.filter((so) => so.type === 'kubernetes.io/tls');
    expect(tls).to.have.lengthOf(1);
    const data = tls[0]?.data ?? [];
    for (const d of data) expect(['tls.crt', 'tls.key', 'ca.crt'], d.objectName).to.include(d.objectName);
    expect(
      data.filter((d) => d.key === 'tls.crt' || d.key === 'tls.key').map((d) => [d.key, d.objectName]),
    ).to.deep.equal([
      ['tls.crt', 'tls.crt'],
      ['tls.key', 'tls.key'],
    ]);
  });

  it('the pod mounts pki-demo with the CA Secret the README creates (ca.crt, ca.key, labelled) as nodePublishSecretRef', () => {
    const p = pod();
    expect(p['metadata'].namespace).to.equal(spc().namespace);
    const csi = (p['spec'].volumes as Obj[]).find((v) => v['csi'])?.['csi'] as Obj;
    expect(csi).to.deep.include({ driver: CSI_DRIVER_NAME, readOnly: true });
    expect(csi['volumeAttributes']).to.deep.equal({ secretProviderClass: 'pki-demo' });
    const secret = csi['nodePublishSecretRef']?.name as string;
    expect(secret).to.equal('pki-demo-ca');
    const readme = readFileSync(join(DEPLOY, 'examples/pki/README.md'), 'utf8');
    expect(readme).to.include(
      `kubectl -n ${p['metadata'].namespace} create secret generic ${secret} --from-file=ca.crt --from-file=ca.key`,
    );
    expect(readme).to.include(
      `kubectl -n ${p['metadata'].namespace} label secret ${secret} secrets-store.csi.k8s.io/used=true`,
    );
    // The URI names the service account: the pod runs as the one the example creates.
    const account = find('ServiceAccount', 'pki-demo').obj;
    expect([p['spec'].serviceAccountName, p['metadata'].namespace]).to.deep.equal([
      account['metadata'].name,
      account['metadata'].namespace,
    ]);
    // keyFilePermission 0640: a non-root pod reads tls.key through its fsGroup.
    expect(spc().parameters['keyFilePermission']).to.equal('0640');
    expect(p['spec'].securityContext?.fsGroup).to.be.a('number');
    const listed = [...readme.matchAll(/^\| `([^`]+\.yaml)` \|/gm)].map((x) => x[1]).sort();
    const files = [
      ...new Set(
        MANIFESTS.filter((x) => x.file.startsWith('examples/pki/')).map((x) => x.file.slice('examples/pki/'.length)),
      ),
    ].sort();
    expect(listed).to.deep.equal(files);
  });
});
