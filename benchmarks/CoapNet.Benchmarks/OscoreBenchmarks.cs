using BenchmarkDotNet.Attributes;
using CoapNet.Messages;
using CoapNet.Oscore;
using CoapNet.Oscore.Cose;
using CoapNet.Oscore.Protection;

namespace CoapNet.Benchmarks;

/// <summary>
/// What OSCORE (RFC 8613) costs per exchange in time and bytes allocated, without I/O: a GET with a Uri-Path and a query
/// protected by the client (section 8.1) and opened by the server (section 8.2), and its 2.05 response with a 20-byte
/// payload protected by the server (section 8.3, the request's nonce) and opened by the client (section 8.4). The
/// contexts are those of RFC 8613 Appendix C.1; the replay window and the stage's bookkeeping are not in it.
/// </summary>
public class OscoreBenchmarks
{
    private static readonly byte[] Secret = Convert.FromHexString("0102030405060708090a0b0c0d0e0f10");
    private static readonly byte[] Salt = Convert.FromHexString("9e7ca92223786340");
    private static readonly byte[] Body = "22.5 C at 12:00:00 Z"u8.ToArray();

    private readonly OscoreContext _client = new(new OscoreContextOptions { MasterSecret = Secret, MasterSalt = Salt, SenderId = [], RecipientId = [0x01] });
    private readonly OscoreContext _server = new(new OscoreContextOptions { MasterSecret = Secret, MasterSalt = Salt, SenderId = [0x01], RecipientId = [] });
    private CoapMessage _request = null!;
    private CoapMessage _protectedRequest = null!;
    private RequestBinding _clientBinding = null!;
    private RequestBinding _serverBinding = null!;

    [GlobalSetup]
    public void Setup()
    {
        _request = CoapMessage.CreateRequest(CoapCode.Get, new Uri("coap://127.0.0.1/sensors/temperature?unit=C"));
        _request.Token = new byte[] { 1, 2, 3, 4 };
        _protectedRequest = OscoreProtection.ProtectRequest(_client, _request, out _clientBinding);
        _serverBinding = new RequestBinding(_server, _clientBinding.RequestKid, _clientBinding.RequestPiv, observe: false);
    }

    /// <summary>The client protects a request and the server opens it.</summary>
    [Benchmark]
    public CoapMessage? Request()
    {
        CoapMessage outer = OscoreProtection.ProtectRequest(_client, _request, out RequestBinding binding);
        return OscoreProtection.OpenRequest(_server, outer, binding.RequestKid.Span, binding.RequestPiv);
    }

    /// <summary>The server protects a response (the request's nonce) and the client opens it.</summary>
    [Benchmark]
    public CoapMessage? Response()
    {
        CoapMessage response = _protectedRequest.CreateResponse(CoapCode.Content);
        response.Payload = Body;
        return OpenResponse(_clientBinding, OscoreProtection.ProtectResponse(_serverBinding, response, withPartialIv: false));
    }

    /// <summary>A whole protected exchange: request and response, each protected and opened.</summary>
    [Benchmark(Baseline = true)]
    public CoapMessage? Exchange()
    {
        CoapMessage outerRequest = OscoreProtection.ProtectRequest(_client, _request, out RequestBinding clientBinding);
        CoapMessage inner = OscoreProtection.OpenRequest(_server, outerRequest, clientBinding.RequestKid.Span, clientBinding.RequestPiv)!;
        CoapMessage response = inner.CreateResponse(CoapCode.Content);
        response.Payload = Body;
        RequestBinding serverBinding = new(_server, clientBinding.RequestKid, clientBinding.RequestPiv, observe: false);
        return OpenResponse(clientBinding, OscoreProtection.ProtectResponse(serverBinding, response, withPartialIv: false));
    }

    // As the client's stage does: the OSCORE option read, then the ciphertext opened with the request's binding.
    private static CoapMessage? OpenResponse(RequestBinding binding, CoapMessage outer)
        => outer.Options.TryGet(CoapOptionNumber.Oscore, out CoapOptionEntry option) && OscoreOptionValue.TryRead(option.Value, out OscoreOptionValue value)
            ? OscoreProtection.OpenResponse(binding, outer, value)
            : null;
}
