using System.Net;
using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Client;

/// <summary>A response received by a <see cref="CoapClient"/>.</summary>
public sealed class CoapResponse
{
    internal CoapResponse(CoapMessage message, IPEndPoint remote)
    {
        Message = message;
        RemoteEndPoint = remote;
    }

    /// <summary>The whole response message, with every typed option accessor (ETag, MaxAge, Block2, ...).</summary>
    public CoapMessage Message { get; }

    /// <summary>Who answered.</summary>
    public IPEndPoint RemoteEndPoint { get; }

    /// <summary>The response code, such as 2.05 Content.</summary>
    public CoapCode Code => Message.Code;

    /// <summary>True for a 2.xx code.</summary>
    public bool IsSuccess => Message.Code.IsSuccess;

    /// <summary>The options.</summary>
    public CoapOptionCollection Options => Message.Options;

    /// <summary>The payload.</summary>
    public ReadOnlyMemory<byte> Payload => Message.Payload;

    /// <summary>The Content-Format option, or null.</summary>
    public ushort? ContentFormat => Message.ContentFormat;

    /// <summary>The payload decoded as UTF-8.</summary>
    /// <returns>The text.</returns>
    public string GetPayloadString() => Message.GetPayloadString();

    /// <summary>Throws unless the code is 2.xx.</summary>
    /// <returns>This response.</returns>
    /// <exception cref="CoapException">The code is not a success code; the message includes the code and any diagnostic payload.</exception>
    public CoapResponse EnsureSuccess()
    {
        if (!IsSuccess)
        {
            string diagnostic = Payload.IsEmpty ? string.Empty : ": " + GetPayloadString();
            throw new CoapException($"{RemoteEndPoint} answered {Code}{diagnostic}", RemoteEndPoint);
        }

        return this;
    }

    /// <summary>The code and a summary of the message.</summary>
    public override string ToString() => Message.ToString();
}
