using System.Buffers.Binary;
using CoapNet.Tests.Interop;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// A <see cref="UdpRelay"/> rule that makes our server (which drops a Finished it cannot verify unanswered, RFC 6347
/// section 4.1.2.7) into one that refuses it with an alert: once the client has sent a record of a later epoch (its
/// Finished, encrypted under the keys it derived), whatever the server sends next (the retransmission of its flight,
/// as it waits for a Finished it can verify) reaches the client as a plaintext fatal alert in its place, as a server
/// that alerts on a failed Finished sends it (epoch 0: the client cannot read the server's epoch 1 before its
/// ChangeCipherSpec, which never comes).
/// </summary>
internal sealed class FinishedRefusal(byte alert)
{
    private bool _finishedSent;

    /// <summary>How many alerts were sent in place of the server's datagrams.</summary>
    public int AlertsSent { get; private set; }

    /// <summary>The relay rule; the relay calls it under its own lock.</summary>
    public IReadOnlyList<byte[]> Rule(bool toServer, byte[] datagram)
    {
        if (toServer)
        {
            // Bytes 3 and 4 of a record header are its epoch (RFC 6347 section 4.1).
            _finishedSent |= datagram.Length > 13 && BinaryPrimitives.ReadUInt16BigEndian(datagram.AsSpan(3)) != 0;
            return [datagram];
        }

        if (!_finishedSent)
        {
            return [datagram];
        }

        AlertsSent++;
        return [Record(alert)];
    }

    /// <summary>
    /// A plaintext DTLS 1.2 alert record: type 21, version 254.253, epoch 0, a sequence number past any of the
    /// server's flights (the client's replay window would drop a repeated one), length 2, level fatal, the alert.
    /// </summary>
    public static byte[] Record(byte alert) => [21, 254, 253, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 2, 2, alert];
}
