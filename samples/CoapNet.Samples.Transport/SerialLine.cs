using System.IO.Pipelines;

namespace CoapNet.Samples.Transport;

/// <summary>
/// A stand-in for a serial line between a host and a device, in process: two byte pipes, one each way, as a UART's two
/// wires would be. Like a real line it carries bytes, not datagrams, so each end frames its datagrams with SLIP
/// (<see cref="SlipFraming"/>, RFC 1055), as CoAP over serial links usually does.
/// </summary>
internal sealed class SerialLine
{
    private readonly Pipe _toDevice = new();
    private readonly Pipe _toHost = new();

    /// <summary>The host's end: writes to the device, reads what the device wrote.</summary>
    public IDuplexPipe HostEnd => new End(_toHost.Reader, _toDevice.Writer);

    /// <summary>The device's end: writes to the host, reads what the host wrote.</summary>
    public IDuplexPipe DeviceEnd => new End(_toDevice.Reader, _toHost.Writer);

    private sealed record End(PipeReader Input, PipeWriter Output) : IDuplexPipe;
}
