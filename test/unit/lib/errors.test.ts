import { expect } from 'chai';
import { status } from '@grpc/grpc-js';
import {
  grpcCodeOf,
  isGrpcCallError,
  kindOfGrpcCode,
  SscError,
  toSscError,
  type ErrorKind,
} from '../../../lib/errors.js';

const TABLE: [ErrorKind, status, string][] = [
  ['invalid-argument', status.INVALID_ARGUMENT, 'InvalidArgument'],
  ['not-found', status.NOT_FOUND, 'NotFound'],
  ['already-exists', status.ALREADY_EXISTS, 'AlreadyExists'],
  ['unavailable', status.UNAVAILABLE, 'Unavailable'],
  ['deadline-exceeded', status.DEADLINE_EXCEEDED, 'DeadlineExceeded'],
  ['resource-exhausted', status.RESOURCE_EXHAUSTED, 'ResourceExhausted'],
  ['aborted', status.ABORTED, 'Aborted'],
  ['failed-precondition', status.FAILED_PRECONDITION, 'FailedPrecondition'],
  ['permission-denied', status.PERMISSION_DENIED, 'PermissionDenied'],
  ['unauthenticated', status.UNAUTHENTICATED, 'Unauthenticated'],
  ['unimplemented', status.UNIMPLEMENTED, 'Unimplemented'],
  ['internal', status.INTERNAL, 'Internal'],
];

describe('error kinds and gRPC codes', () => {
  for (const [kind, code, reason] of TABLE) {
    it(`${kind} ↔ ${status[code]} (default reason ${reason})`, () => {
      expect(grpcCodeOf(kind)).to.equal(code);
      expect(kindOfGrpcCode(code)).to.equal(kind);
      const err = new SscError(kind, 'm');
      expect(err.kind).to.equal(kind);
      expect(err.reason).to.equal(reason);
      expect(err.name).to.equal('SscError');
      expect(err).to.be.instanceOf(Error);
    });
  }

  it('the table is 1:1 (no two kinds share a code)', () => {
    const codes = TABLE.map(([kind]) => grpcCodeOf(kind));
    expect(new Set(codes).size).to.equal(TABLE.length);
    expect(codes).to.not.include(status.OK);
    expect(codes).to.not.include(status.UNKNOWN);
  });

  const unmapped: [number, ErrorKind][] = [
    [status.CANCELLED, 'aborted'],
    [status.UNKNOWN, 'internal'],
    [status.OUT_OF_RANGE, 'internal'],
    [status.DATA_LOSS, 'internal'],
    [status.OK, 'internal'],
    [99, 'internal'],
    [-1, 'internal'],
  ];
  for (const [code, kind] of unmapped) {
    it(`kindOfGrpcCode(${code}) is ${kind}`, () => expect(kindOfGrpcCode(code)).to.equal(kind));
  }
});

describe('toSscError', () => {
  it('returns an SscError unchanged', () => {
    const err = new SscError('not-found', 'gone', { reason: 'SecretProviderClassNotFound' });
    expect(toSscError(err)).to.equal(err);
  });

  it('maps a grpc-js call error by code and keeps its details', () => {
    const e = toSscError(
      Object.assign(new Error('14 UNAVAILABLE: x'), { code: status.UNAVAILABLE, details: 'connect failed' }),
    );
    expect([e.kind, e.reason, e.message]).to.deep.equal(['unavailable', 'Unavailable', 'connect failed']);
  });

  const unknown: [string, unknown][] = [
    ['an Error holding secret data', new Error('password=hunter2')],
    ['a string', 'token abc'],
    ['undefined', undefined],
    ['an object with a string code', { code: 'ENOENT', details: 'x' }],
    ['an object with code but no details', { code: 5 }],
  ];
  for (const [name, thrown] of unknown) {
    it(`turns ${name} into internal without details`, () => {
      const e = toSscError(thrown);
      expect(e.kind).to.equal('internal');
      expect(e.reason).to.equal('Internal');
      expect(e.message).to.equal('internal error (a bug): see the driver log');
      expect(e.cause).to.equal(thrown);
    });
  }

  it('isGrpcCallError needs a numeric code and string details', () => {
    expect(isGrpcCallError({ code: 2, details: '' })).to.equal(true);
    expect(isGrpcCallError({ code: '2', details: '' })).to.equal(false);
    expect(isGrpcCallError(null)).to.equal(false);
  });
});

describe('SscError.withContext', () => {
  it('prefixes the message and keeps kind, reason and cause', () => {
    const cause = new Error('root');
    const e = new SscError('unavailable', 'dial failed', { reason: 'ProviderUnavailable', cause }).withContext(
      'pod default/app, SecretProviderClass spc',
    );
    expect(e).to.be.instanceOf(SscError);
    expect(e.message).to.equal('pod default/app, SecretProviderClass spc: dial failed');
    expect(e.kind).to.equal('unavailable');
    expect(e.reason).to.equal('ProviderUnavailable');
    expect(e.cause).to.equal(cause);
  });

  it('keeps the default reason too', () => {
    const e = new SscError('aborted', 'busy').withContext('a').withContext('b');
    expect([e.message, e.kind, e.reason]).to.deep.equal(['b: a: busy', 'aborted', 'Aborted']);
  });
});

describe('toSscError on filesystem errors', () => {
  const cases: [string, ErrorKind][] = [
    ['ENOSPC', 'resource-exhausted'],
    ['EACCES', 'permission-denied'],
    ['ENOENT', 'not-found'],
    ['EROFS', 'failed-precondition'],
    ['EWHATEVER', 'failed-precondition'],
  ];
  for (const [code, kind] of cases) {
    it(`maps ${code} to ${kind}, naming the syscall and path`, () => {
      const err = Object.assign(new Error(`${code}: boom`), { code, syscall: 'open', path: '/target/x' });
      const e = toSscError(err);
      expect(e.kind).to.equal(kind);
      expect(e.reason).to.equal('FilesystemError');
      expect(e.message).to.equal(`filesystem error ${code} (open /target/x)`);
    });
  }
});
