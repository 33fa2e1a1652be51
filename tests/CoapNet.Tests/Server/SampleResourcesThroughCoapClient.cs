using System.Net;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Messages;

namespace CoapNet.Tests.Server;

/// <summary>The sample-resource suite through our <see cref="CoapClient"/>, one subclass per entry point.</summary>
public abstract class SampleResourcesThroughCoapClient : SampleResourceBehaviour
{
    private readonly bool _synchronous;
    private readonly CoapClient _client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) });

    private protected SampleResourcesThroughCoapClient(bool synchronous, string scheme = "coap")
        : base(scheme) => _synchronous = synchronous;

    private CoapPeer Peer => new(Scheme, HasMessageTypes ? Server.EndPoint : Server.TcpEndPoint!);

    public override async Task DisposeAsync()
    {
        await _client.DisposeAsync();
        await base.DisposeAsync();
    }

    private protected override async Task<SampleReply> SendAsync(SampleRequest request)
    {
        // The blocking call runs on a thread of its own, so parallel tests never starve the thread pool
        // that the server's timers (the separate-response watchdog) need.
        CoapResponse response = _synchronous
            ? await Task.Factory.StartNew(() => Send(request), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default)
            : await SendAsyncCore(request);
        CoapMessage message = response.Message;
        return new SampleReply(
            response.Code,
            response.Payload.ToArray(),
            response.ContentFormat,
            message.ETag?.ToArray(),
            message.Options.GetStrings(CoapOptionNumber.LocationPath),
            message.Type != CoapMessageType.Acknowledgement);
    }

    // The method-per-verb API where it suffices; a hand-built message for extra options.
    private CoapResponse Send(SampleRequest request)
    {
        Uri uri = Server.Uri(request.PathAndQuery, Scheme);
        if (NeedsMessage(request))
        {
            return _client.Send(BuildMessage(request, uri), Peer);
        }

        ReadOnlyMemory<byte> payload = Utf8(request.Payload);
        return request.Method.Value switch
        {
            1 => _client.Get(uri),
            2 => _client.Post(uri, payload, request.ContentFormat),
            3 => _client.Put(uri, payload, request.ContentFormat),
            4 => _client.Delete(uri),
            _ => throw new NotSupportedException(request.Method.ToString()),
        };
    }

    private Task<CoapResponse> SendAsyncCore(SampleRequest request)
    {
        Uri uri = Server.Uri(request.PathAndQuery, Scheme);
        if (NeedsMessage(request))
        {
            return _client.SendAsync(BuildMessage(request, uri), Peer);
        }

        ReadOnlyMemory<byte> payload = Utf8(request.Payload);
        return request.Method.Value switch
        {
            1 => _client.GetAsync(uri),
            2 => _client.PostAsync(uri, payload, request.ContentFormat),
            3 => _client.PutAsync(uri, payload, request.ContentFormat),
            4 => _client.DeleteAsync(uri),
            _ => throw new NotSupportedException(request.Method.ToString()),
        };
    }

    private static bool NeedsMessage(SampleRequest request) => request.Accept is not null || request.Options.Count > 0;

    private static CoapMessage BuildMessage(SampleRequest request, Uri uri)
    {
        CoapMessage message = CoapMessage.CreateRequest(request.Method, uri);
        message.Payload = Utf8(request.Payload);
        message.ContentFormat = request.ContentFormat;
        message.Accept = request.Accept;
        foreach ((ushort number, byte[] value) in request.Options)
        {
            message.Options.Add((CoapOptionNumber)number, value);
        }

        return message;
    }
}

/// <summary>The sample-resource suite through the synchronous methods of <see cref="CoapClient"/>.</summary>
public sealed class SampleResourcesThroughSynchronousCoapClient() : SampleResourcesThroughCoapClient(synchronous: true);

/// <summary>The sample-resource suite through the asynchronous methods of <see cref="CoapClient"/>.</summary>
public sealed class SampleResourcesThroughAsynchronousCoapClient() : SampleResourcesThroughCoapClient(synchronous: false);

/// <summary>The sample-resource suite through the synchronous methods of <see cref="CoapClient"/> over coap+tcp.</summary>
public sealed class SampleResourcesThroughSynchronousCoapClientOverTcp() : SampleResourcesThroughCoapClient(synchronous: true, scheme: "coap+tcp");

/// <summary>The sample-resource suite through the asynchronous methods of <see cref="CoapClient"/> over coap+tcp.</summary>
public sealed class SampleResourcesThroughAsynchronousCoapClientOverTcp() : SampleResourcesThroughCoapClient(synchronous: false, scheme: "coap+tcp");
