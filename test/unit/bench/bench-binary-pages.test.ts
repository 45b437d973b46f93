import { expect } from 'chai';
import { componentOf, qualifiedName, unnamedDataComponent } from '../../../bench/binary-pages.js';

describe("bench/binary-pages: naming the node binary's resident pages", () => {
  const cases: [string, string][] = [
    [
      'v8::internal::compiler::turboshaft::GraphBuilder::Process(v8::internal::compiler::turboshaft::Block*)',
      'V8 TurboFan / Turboshaft (optimising compiler)',
    ],
    [
      'v8::internal::compiler::CodeGenerator::AssembleArchInstruction(v8::internal::compiler::Instruction*)',
      'V8 TurboFan / Turboshaft (optimising compiler)',
    ],
    ['v8::internal::maglev::MaglevGraphBuilder::VisitLdaZero()', 'V8 Maglev (mid-tier compiler)'],
    ['v8::internal::baseline::BaselineCompiler::VisitSingleBytecode()', 'V8 Sparkplug (baseline compiler)'],
    ['Builtins_InterpreterEntryTrampoline', 'V8 embedded builtins'],
    ['v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace)', 'V8 runtime, heap, parser, interpreter'],
    ['icudt78_dat', 'ICU'],
    ['icu_78::UnicodeString::doAppend(char16_t const*, int, int)', 'ICU'],
    ['SSL_do_handshake', 'OpenSSL'],
    ['ossl_aes_gcm_encrypt_avx512', 'OpenSSL'],
    ['ecp_nistz256_precomputed', 'OpenSSL'],
    ['nghttp2_session_mem_recv2', 'nghttp2 (HTTP/2)'],
    ['uv__io_poll', 'libuv'],
    ['node::http2::Http2Session::OnStreamRead(long, uv_buf_t const&)', 'node core (C++)'],
    [
      'simdjson::internal::structure_analyzer::analyze_array(simdjson::dom::array const&, unsigned long)',
      'node core (C++)',
    ],
    [
      'std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_mutate(unsigned long)',
      'C++ standard library',
    ],
    ['memcpy_fast_path', 'other code'],
    ['node::fs::Open(v8::FunctionCallbackInfo<v8::Value> const&)', 'node core (C++)'],
    [
      'node::crypto::CryptoJob<node::crypto::HKDFTraits>::Run(v8::FunctionCallbackInfo<v8::Value> const&)',
      'node core (C++)',
    ],
    [
      'v8::internal::JSDateTimeFormat::New(v8::internal::Isolate*, icu_78::Locale const&)',
      'V8 runtime, heap, parser, interpreter',
    ],
    ['v8::internal::WasmTrustedInstanceData::New(v8::internal::Isolate*)', 'V8 WebAssembly'],
  ];
  for (const [symbol, component] of cases) {
    it(`puts ${symbol.slice(0, 60)} in ${component}`, () => expect(componentOf(symbol)).to.equal(component));
  }

  it('judges by the qualified name, without template arguments or parameters', () => {
    expect(
      qualifiedName(
        'node::crypto::CryptoJob<node::crypto::HKDFTraits>::Run(v8::FunctionCallbackInfo<v8::Value> const&)',
      ),
    ).to.equal('node::crypto::CryptoJob::Run');
    expect(qualifiedName('v8::internal::(anonymous namespace)::Foo::Bar(int)')).to.equal(
      'v8::internal::(anonymous namespace)::Foo::Bar',
    );
    expect(qualifiedName('uv__io_poll')).to.equal('uv__io_poll');
  });

  it('tells JS source text from binary snapshot data', () => {
    const text = Buffer.from("'use strict';\nconst { Buffer } = require('buffer');\n".repeat(80).slice(0, 4096));
    const binary = Buffer.alloc(4096);
    for (let i = 0; i < binary.length; i++) binary[i] = (i * 37) % 256;
    expect(unnamedDataComponent(text)).to.equal("JS sources of node's built-in modules");
    expect(unnamedDataComponent(binary)).to.equal('startup snapshot, code cache (unnamed data)');
  });
});
