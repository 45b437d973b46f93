// Inputs and outputs of jwkToPublicKeyPem as captured from its hand-built DER encoder
// (lib/asn1/der.ts), before the switch to node:crypto's JWK import and SPKI export. The keys
// are fixed so the outputs are too: an RSA-2048 modulus and, per curve, a point whose x
// starts with a zero byte (y0: the y of the point with x = 0, sqrt(b) mod p).
import type { PublicJwk } from '../../providers/azure/jwk-pem.js';

const RSA_N =
  'vs8MjrUP3f2uDpw6RpYqp3MXuSIXV0LFuTJCkuQ81ACcH7M7wU8cgnb1WwjiNaiS6U8AUBA_ZWoGVCqWBrFfQqwF0AAgaCd7lBVzZFG83zsWTeEShAr2VWFtsDLpW8DBP-RoiueJAdw-hrihVEF7QnAmXqJ_khrxcyLFiBom8mDzZ7L4I9E1Wk7C1P6NbIlbfUvRPuSoxghsmlJje-zqPD61uLvQ3k6x2KVozRWFVnHb4W-UOEv_GgqCIGlbCftmVUUIKWPhjuv4Hpces6ft8dZykH4WQo6buRMj6PABIziLpOY-CxkskrrfguZpEF4f8knbsvb1UQ81XxC94i6GnQ';
const P256 = {
  x: 'AF5CQFZYv1U3YraDLbvwQEfwgWu1oQCsLyblW1X9G2c',
  y: 'LQahCVhpI7pgNMKVdpY5IX6h3OVc2nGajscWDChWSAY',
  y0: 'ZkhceA4vg9ckM71dhKBrtlQcKvMdrocXKL-FahdPk_Q',
};
const P384 = {
  x: 'AJlXZsRzfBFYKALpXFrjX2yHLtTi3dSPbYd1m7FGcmS_cpJJVstKHV694mWNXSVV',
  y: 'iPhR28nOT42VFnbl2np3WFI8d8c3iIrMD9cuEbyC2c7wr_FdMLuvlPX59wUCEbuq',
  y0: 'wwZhD7CuWhWc9FwGBp8ipsXrNkHGAtQt6ixLT3VVB5NAbYDSuRrVT5BIvUh68a3h',
};
const P521 = {
  x: 'APUcAJcookkASZyjuzdD11Cw4lIbIwhreVlrYKjW9ktVMfbQpHPGhKRfiaFfJFtNZaWLvWQgxaSiemgKzmY0mpIh',
  y: 'AWJHz1YHWhjJxfbGdLwV6t0vLHu8ypSAFhgmB1VLmFJdjH1SFn4BQ5jZXwk7nTE85WQjQTfiImrN7-SKHEwmhllX',
  y0: 'AS3xNgFZSog-8tk15Eu5C_TWYZt05Sr3VS-XdpARwHGetDnPqyqI1A_lmivtH0NVcWmi0KLM0oDGB7krv1H_4LB4',
};

const b64 = (s: string): Buffer => Buffer.from(s, 'base64url');
const hex = (s: string): Buffer => Buffer.from(s, 'hex');
const zeros = (n: number, b: Buffer): Buffer => Buffer.concat([Buffer.alloc(n), b]);

/** [case, JWK, the SPKI DER (base64) written for it]. */
export const JWK_SPKI_FIXTURES: readonly (readonly [string, PublicJwk, string])[] = [
  [
    'RSA, e = 65537',
    { kty: 'RSA', n: b64(RSA_N), e: hex('010001') },
    'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAvs8MjrUP3f2uDpw6RpYqp3MXuSIXV0LFuTJCkuQ81ACcH7M7wU8cgnb1WwjiNaiS6U8AUBA/ZWoGVCqWBrFfQqwF0AAgaCd7lBVzZFG83zsWTeEShAr2VWFtsDLpW8DBP+RoiueJAdw+hrihVEF7QnAmXqJ/khrxcyLFiBom8mDzZ7L4I9E1Wk7C1P6NbIlbfUvRPuSoxghsmlJje+zqPD61uLvQ3k6x2KVozRWFVnHb4W+UOEv/GgqCIGlbCftmVUUIKWPhjuv4Hpces6ft8dZykH4WQo6buRMj6PABIziLpOY+CxkskrrfguZpEF4f8knbsvb1UQ81XxC94i6GnQIDAQAB',
  ],
  [
    'RSA-HSM, e = 65537',
    { kty: 'RSA-HSM', n: b64(RSA_N), e: hex('010001') },
    'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAvs8MjrUP3f2uDpw6RpYqp3MXuSIXV0LFuTJCkuQ81ACcH7M7wU8cgnb1WwjiNaiS6U8AUBA/ZWoGVCqWBrFfQqwF0AAgaCd7lBVzZFG83zsWTeEShAr2VWFtsDLpW8DBP+RoiueJAdw+hrihVEF7QnAmXqJ/khrxcyLFiBom8mDzZ7L4I9E1Wk7C1P6NbIlbfUvRPuSoxghsmlJje+zqPD61uLvQ3k6x2KVozRWFVnHb4W+UOEv/GgqCIGlbCftmVUUIKWPhjuv4Hpces6ft8dZykH4WQo6buRMj6PABIziLpOY+CxkskrrfguZpEF4f8knbsvb1UQ81XxC94i6GnQIDAQAB',
  ],
  [
    'RSA, n with a leading zero byte',
    { kty: 'RSA', n: zeros(1, b64(RSA_N)), e: hex('010001') },
    'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAvs8MjrUP3f2uDpw6RpYqp3MXuSIXV0LFuTJCkuQ81ACcH7M7wU8cgnb1WwjiNaiS6U8AUBA/ZWoGVCqWBrFfQqwF0AAgaCd7lBVzZFG83zsWTeEShAr2VWFtsDLpW8DBP+RoiueJAdw+hrihVEF7QnAmXqJ/khrxcyLFiBom8mDzZ7L4I9E1Wk7C1P6NbIlbfUvRPuSoxghsmlJje+zqPD61uLvQ3k6x2KVozRWFVnHb4W+UOEv/GgqCIGlbCftmVUUIKWPhjuv4Hpces6ft8dZykH4WQo6buRMj6PABIziLpOY+CxkskrrfguZpEF4f8knbsvb1UQ81XxC94i6GnQIDAQAB',
  ],
  [
    'RSA, n with three leading zero bytes',
    { kty: 'RSA', n: zeros(3, b64(RSA_N)), e: hex('010001') },
    'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAvs8MjrUP3f2uDpw6RpYqp3MXuSIXV0LFuTJCkuQ81ACcH7M7wU8cgnb1WwjiNaiS6U8AUBA/ZWoGVCqWBrFfQqwF0AAgaCd7lBVzZFG83zsWTeEShAr2VWFtsDLpW8DBP+RoiueJAdw+hrihVEF7QnAmXqJ/khrxcyLFiBom8mDzZ7L4I9E1Wk7C1P6NbIlbfUvRPuSoxghsmlJje+zqPD61uLvQ3k6x2KVozRWFVnHb4W+UOEv/GgqCIGlbCftmVUUIKWPhjuv4Hpces6ft8dZykH4WQo6buRMj6PABIziLpOY+CxkskrrfguZpEF4f8knbsvb1UQ81XxC94i6GnQIDAQAB',
  ],
  [
    'RSA, e with leading zero bytes',
    { kty: 'RSA', n: b64(RSA_N), e: hex('0000010001') },
    'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAvs8MjrUP3f2uDpw6RpYqp3MXuSIXV0LFuTJCkuQ81ACcH7M7wU8cgnb1WwjiNaiS6U8AUBA/ZWoGVCqWBrFfQqwF0AAgaCd7lBVzZFG83zsWTeEShAr2VWFtsDLpW8DBP+RoiueJAdw+hrihVEF7QnAmXqJ/khrxcyLFiBom8mDzZ7L4I9E1Wk7C1P6NbIlbfUvRPuSoxghsmlJje+zqPD61uLvQ3k6x2KVozRWFVnHb4W+UOEv/GgqCIGlbCftmVUUIKWPhjuv4Hpces6ft8dZykH4WQo6buRMj6PABIziLpOY+CxkskrrfguZpEF4f8knbsvb1UQ81XxC94i6GnQIDAQAB',
  ],
  [
    'RSA, e = 3',
    { kty: 'RSA', n: b64(RSA_N), e: hex('03') },
    'MIIBIDANBgkqhkiG9w0BAQEFAAOCAQ0AMIIBCAKCAQEAvs8MjrUP3f2uDpw6RpYqp3MXuSIXV0LFuTJCkuQ81ACcH7M7wU8cgnb1WwjiNaiS6U8AUBA/ZWoGVCqWBrFfQqwF0AAgaCd7lBVzZFG83zsWTeEShAr2VWFtsDLpW8DBP+RoiueJAdw+hrihVEF7QnAmXqJ/khrxcyLFiBom8mDzZ7L4I9E1Wk7C1P6NbIlbfUvRPuSoxghsmlJje+zqPD61uLvQ3k6x2KVozRWFVnHb4W+UOEv/GgqCIGlbCftmVUUIKWPhjuv4Hpces6ft8dZykH4WQo6buRMj6PABIziLpOY+CxkskrrfguZpEF4f8knbsvb1UQ81XxC94i6GnQIBAw==',
  ],
  [
    'RSA, e = 2^63 - 1 (the largest accepted)',
    { kty: 'RSA', n: b64(RSA_N), e: hex('7fffffffffffffff') },
    'MIIBJzANBgkqhkiG9w0BAQEFAAOCARQAMIIBDwKCAQEAvs8MjrUP3f2uDpw6RpYqp3MXuSIXV0LFuTJCkuQ81ACcH7M7wU8cgnb1WwjiNaiS6U8AUBA/ZWoGVCqWBrFfQqwF0AAgaCd7lBVzZFG83zsWTeEShAr2VWFtsDLpW8DBP+RoiueJAdw+hrihVEF7QnAmXqJ/khrxcyLFiBom8mDzZ7L4I9E1Wk7C1P6NbIlbfUvRPuSoxghsmlJje+zqPD61uLvQ3k6x2KVozRWFVnHb4W+UOEv/GgqCIGlbCftmVUUIKWPhjuv4Hpces6ft8dZykH4WQo6buRMj6PABIziLpOY+CxkskrrfguZpEF4f8knbsvb1UQ81XxC94i6GnQIIf/////////8=',
  ],
  [
    'RSA, e = 2^63 - 1 in nine bytes',
    { kty: 'RSA', n: b64(RSA_N), e: hex('007fffffffffffffff') },
    'MIIBJzANBgkqhkiG9w0BAQEFAAOCARQAMIIBDwKCAQEAvs8MjrUP3f2uDpw6RpYqp3MXuSIXV0LFuTJCkuQ81ACcH7M7wU8cgnb1WwjiNaiS6U8AUBA/ZWoGVCqWBrFfQqwF0AAgaCd7lBVzZFG83zsWTeEShAr2VWFtsDLpW8DBP+RoiueJAdw+hrihVEF7QnAmXqJ/khrxcyLFiBom8mDzZ7L4I9E1Wk7C1P6NbIlbfUvRPuSoxghsmlJje+zqPD61uLvQ3k6x2KVozRWFVnHb4W+UOEv/GgqCIGlbCftmVUUIKWPhjuv4Hpces6ft8dZykH4WQo6buRMj6PABIziLpOY+CxkskrrfguZpEF4f8knbsvb1UQ81XxC94i6GnQIIf/////////8=',
  ],
  [
    'RSA, e empty (big.Int 0)',
    { kty: 'RSA', n: b64(RSA_N), e: hex('') },
    'MIIBIDANBgkqhkiG9w0BAQEFAAOCAQ0AMIIBCAKCAQEAvs8MjrUP3f2uDpw6RpYqp3MXuSIXV0LFuTJCkuQ81ACcH7M7wU8cgnb1WwjiNaiS6U8AUBA/ZWoGVCqWBrFfQqwF0AAgaCd7lBVzZFG83zsWTeEShAr2VWFtsDLpW8DBP+RoiueJAdw+hrihVEF7QnAmXqJ/khrxcyLFiBom8mDzZ7L4I9E1Wk7C1P6NbIlbfUvRPuSoxghsmlJje+zqPD61uLvQ3k6x2KVozRWFVnHb4W+UOEv/GgqCIGlbCftmVUUIKWPhjuv4Hpces6ft8dZykH4WQo6buRMj6PABIziLpOY+CxkskrrfguZpEF4f8knbsvb1UQ81XxC94i6GnQIBAA==',
  ],
  [
    'RSA, e missing (big.Int 0)',
    { kty: 'RSA', n: b64(RSA_N) },
    'MIIBIDANBgkqhkiG9w0BAQEFAAOCAQ0AMIIBCAKCAQEAvs8MjrUP3f2uDpw6RpYqp3MXuSIXV0LFuTJCkuQ81ACcH7M7wU8cgnb1WwjiNaiS6U8AUBA/ZWoGVCqWBrFfQqwF0AAgaCd7lBVzZFG83zsWTeEShAr2VWFtsDLpW8DBP+RoiueJAdw+hrihVEF7QnAmXqJ/khrxcyLFiBom8mDzZ7L4I9E1Wk7C1P6NbIlbfUvRPuSoxghsmlJje+zqPD61uLvQ3k6x2KVozRWFVnHb4W+UOEv/GgqCIGlbCftmVUUIKWPhjuv4Hpces6ft8dZykH4WQo6buRMj6PABIziLpOY+CxkskrrfguZpEF4f8knbsvb1UQ81XxC94i6GnQIBAA==',
  ],
  ['RSA, n missing (big.Int 0)', { kty: 'RSA', e: hex('010001') }, 'MBwwDQYJKoZIhvcNAQEBBQADCwAwCAIBAAIDAQAB'],
  [
    'P-256, x with its leading zero byte',
    { kty: 'EC', crv: 'P-256', x: b64(P256.x), y: b64(P256.y) },
    'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEAF5CQFZYv1U3YraDLbvwQEfwgWu1oQCsLyblW1X9G2ctBqEJWGkjumA0wpV2ljkhfqHc5VzacZqOxxYMKFZIBg==',
  ],
  [
    'P-256 (EC-HSM), x with its leading zero byte',
    { kty: 'EC-HSM', crv: 'P-256', x: b64(P256.x), y: b64(P256.y) },
    'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEAF5CQFZYv1U3YraDLbvwQEfwgWu1oQCsLyblW1X9G2ctBqEJWGkjumA0wpV2ljkhfqHc5VzacZqOxxYMKFZIBg==',
  ],
  [
    'P-256, x with its leading zero byte stripped',
    { kty: 'EC', crv: 'P-256', x: b64(P256.x).subarray(1), y: b64(P256.y) },
    'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEAF5CQFZYv1U3YraDLbvwQEfwgWu1oQCsLyblW1X9G2ctBqEJWGkjumA0wpV2ljkhfqHc5VzacZqOxxYMKFZIBg==',
  ],
  [
    'P-256, x with an extra leading zero byte',
    { kty: 'EC', crv: 'P-256', x: zeros(1, b64(P256.x)), y: b64(P256.y) },
    'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEAF5CQFZYv1U3YraDLbvwQEfwgWu1oQCsLyblW1X9G2ctBqEJWGkjumA0wpV2ljkhfqHc5VzacZqOxxYMKFZIBg==',
  ],
  [
    'P-256, y with two extra leading zero bytes',
    { kty: 'EC', crv: 'P-256', x: b64(P256.x), y: zeros(2, b64(P256.y)) },
    'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEAF5CQFZYv1U3YraDLbvwQEfwgWu1oQCsLyblW1X9G2ctBqEJWGkjumA0wpV2ljkhfqHc5VzacZqOxxYMKFZIBg==',
  ],
  [
    'P-256, the point with x = 0, x missing',
    { kty: 'EC', crv: 'P-256', y: b64(P256.y0) },
    'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABmSFx4Di+D1yQzvV2EoGu2VBwq8x2uhxcov4VqF0+T9A==',
  ],
  [
    'P-256, the point with x = 0, x one zero byte',
    { kty: 'EC', crv: 'P-256', x: hex('00'), y: b64(P256.y0) },
    'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABmSFx4Di+D1yQzvV2EoGu2VBwq8x2uhxcov4VqF0+T9A==',
  ],
  [
    'P-384, x with its leading zero byte',
    { kty: 'EC', crv: 'P-384', x: b64(P384.x), y: b64(P384.y) },
    'MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEAJlXZsRzfBFYKALpXFrjX2yHLtTi3dSPbYd1m7FGcmS/cpJJVstKHV694mWNXSVViPhR28nOT42VFnbl2np3WFI8d8c3iIrMD9cuEbyC2c7wr/FdMLuvlPX59wUCEbuq',
  ],
  [
    'P-384 (EC-HSM), x with its leading zero byte',
    { kty: 'EC-HSM', crv: 'P-384', x: b64(P384.x), y: b64(P384.y) },
    'MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEAJlXZsRzfBFYKALpXFrjX2yHLtTi3dSPbYd1m7FGcmS/cpJJVstKHV694mWNXSVViPhR28nOT42VFnbl2np3WFI8d8c3iIrMD9cuEbyC2c7wr/FdMLuvlPX59wUCEbuq',
  ],
  [
    'P-384, x with its leading zero byte stripped',
    { kty: 'EC', crv: 'P-384', x: b64(P384.x).subarray(1), y: b64(P384.y) },
    'MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEAJlXZsRzfBFYKALpXFrjX2yHLtTi3dSPbYd1m7FGcmS/cpJJVstKHV694mWNXSVViPhR28nOT42VFnbl2np3WFI8d8c3iIrMD9cuEbyC2c7wr/FdMLuvlPX59wUCEbuq',
  ],
  [
    'P-384, x with an extra leading zero byte',
    { kty: 'EC', crv: 'P-384', x: zeros(1, b64(P384.x)), y: b64(P384.y) },
    'MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEAJlXZsRzfBFYKALpXFrjX2yHLtTi3dSPbYd1m7FGcmS/cpJJVstKHV694mWNXSVViPhR28nOT42VFnbl2np3WFI8d8c3iIrMD9cuEbyC2c7wr/FdMLuvlPX59wUCEbuq',
  ],
  [
    'P-384, y with two extra leading zero bytes',
    { kty: 'EC', crv: 'P-384', x: b64(P384.x), y: zeros(2, b64(P384.y)) },
    'MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEAJlXZsRzfBFYKALpXFrjX2yHLtTi3dSPbYd1m7FGcmS/cpJJVstKHV694mWNXSVViPhR28nOT42VFnbl2np3WFI8d8c3iIrMD9cuEbyC2c7wr/FdMLuvlPX59wUCEbuq',
  ],
  [
    'P-384, the point with x = 0, x missing',
    { kty: 'EC', crv: 'P-384', y: b64(P384.y0) },
    'MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAwwZhD7CuWhWc9FwGBp8ipsXrNkHGAtQt6ixLT3VVB5NAbYDSuRrVT5BIvUh68a3h',
  ],
  [
    'P-384, the point with x = 0, x one zero byte',
    { kty: 'EC', crv: 'P-384', x: hex('00'), y: b64(P384.y0) },
    'MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAwwZhD7CuWhWc9FwGBp8ipsXrNkHGAtQt6ixLT3VVB5NAbYDSuRrVT5BIvUh68a3h',
  ],
  [
    'P-521, x with its leading zero byte',
    { kty: 'EC', crv: 'P-521', x: b64(P521.x), y: b64(P521.y) },
    'MIGbMBAGByqGSM49AgEGBSuBBAAjA4GGAAQA9RwAlyiiSQBJnKO7N0PXULDiUhsjCGt5WWtgqNb2S1Ux9tCkc8aEpF+JoV8kW01lpYu9ZCDFpKJ6aArOZjSakiEBYkfPVgdaGMnF9sZ0vBXq3S8se7zKlIAWGCYHVUuYUl2MfVIWfgFDmNlfCTudMTzlZCNBN+Iias3v5IocTCaGWVc=',
  ],
  [
    'P-521 (EC-HSM), x with its leading zero byte',
    { kty: 'EC-HSM', crv: 'P-521', x: b64(P521.x), y: b64(P521.y) },
    'MIGbMBAGByqGSM49AgEGBSuBBAAjA4GGAAQA9RwAlyiiSQBJnKO7N0PXULDiUhsjCGt5WWtgqNb2S1Ux9tCkc8aEpF+JoV8kW01lpYu9ZCDFpKJ6aArOZjSakiEBYkfPVgdaGMnF9sZ0vBXq3S8se7zKlIAWGCYHVUuYUl2MfVIWfgFDmNlfCTudMTzlZCNBN+Iias3v5IocTCaGWVc=',
  ],
  [
    'P-521, x with its leading zero byte stripped',
    { kty: 'EC', crv: 'P-521', x: b64(P521.x).subarray(1), y: b64(P521.y) },
    'MIGbMBAGByqGSM49AgEGBSuBBAAjA4GGAAQA9RwAlyiiSQBJnKO7N0PXULDiUhsjCGt5WWtgqNb2S1Ux9tCkc8aEpF+JoV8kW01lpYu9ZCDFpKJ6aArOZjSakiEBYkfPVgdaGMnF9sZ0vBXq3S8se7zKlIAWGCYHVUuYUl2MfVIWfgFDmNlfCTudMTzlZCNBN+Iias3v5IocTCaGWVc=',
  ],
  [
    'P-521, x with an extra leading zero byte',
    { kty: 'EC', crv: 'P-521', x: zeros(1, b64(P521.x)), y: b64(P521.y) },
    'MIGbMBAGByqGSM49AgEGBSuBBAAjA4GGAAQA9RwAlyiiSQBJnKO7N0PXULDiUhsjCGt5WWtgqNb2S1Ux9tCkc8aEpF+JoV8kW01lpYu9ZCDFpKJ6aArOZjSakiEBYkfPVgdaGMnF9sZ0vBXq3S8se7zKlIAWGCYHVUuYUl2MfVIWfgFDmNlfCTudMTzlZCNBN+Iias3v5IocTCaGWVc=',
  ],
  [
    'P-521, y with two extra leading zero bytes',
    { kty: 'EC', crv: 'P-521', x: b64(P521.x), y: zeros(2, b64(P521.y)) },
    'MIGbMBAGByqGSM49AgEGBSuBBAAjA4GGAAQA9RwAlyiiSQBJnKO7N0PXULDiUhsjCGt5WWtgqNb2S1Ux9tCkc8aEpF+JoV8kW01lpYu9ZCDFpKJ6aArOZjSakiEBYkfPVgdaGMnF9sZ0vBXq3S8se7zKlIAWGCYHVUuYUl2MfVIWfgFDmNlfCTudMTzlZCNBN+Iias3v5IocTCaGWVc=',
  ],
  [
    'P-521, the point with x = 0, x missing',
    { kty: 'EC', crv: 'P-521', y: b64(P521.y0) },
    'MIGbMBAGByqGSM49AgEGBSuBBAAjA4GGAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABLfE2AVlKiD7y2TXkS7kL9NZhm3TlKvdVL5d2kBHAcZ60Oc+rKojUD+WaK+0fQ1VxaaLQoszSgMYHuSu/Uf/gsHg=',
  ],
  [
    'P-521, the point with x = 0, x one zero byte',
    { kty: 'EC', crv: 'P-521', x: hex('00'), y: b64(P521.y0) },
    'MIGbMBAGByqGSM49AgEGBSuBBAAjA4GGAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABLfE2AVlKiD7y2TXkS7kL9NZhm3TlKvdVL5d2kBHAcZ60Oc+rKojUD+WaK+0fQ1VxaaLQoszSgMYHuSu/Uf/gsHg=',
  ],
];
