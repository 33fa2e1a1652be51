using System.Net;
using System.Net.Sockets;
using CoapNet.Tests.Infrastructure;
using Org.BouncyCastle.Security;
using Org.BouncyCastle.Tls;
using Org.BouncyCastle.Tls.Crypto.Impl.BC;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// A bare BouncyCastle DTLS 1.2 PSK client (TLS_PSK_WITH_AES_128_CCM_8) over a UDP socket, with what CoapNet's own
/// client never does: the extended master secret (RFC 7627) can be left out.
/// </summary>
internal static class BouncyCastlePskClient
{
    /// <summary>Runs the handshake with <paramref name="server"/> on a thread of its own; fails with the alert that ended it.</summary>
    public static Task ConnectAsync(IPEndPoint server, string identity, byte[] key, bool extendedMasterSecret)
        => Task.Factory.StartNew(
            () =>
            {
                using UdpClient socket = new(new IPEndPoint(IPAddress.Loopback, 0));
                socket.Connect(server);
                Client client = new(new BcTlsCrypto(new SecureRandom()), new BasicTlsPskIdentity(identity, key), extendedMasterSecret);
                new DtlsClientProtocol().Connect(client, new Socket(socket, Wait.DefaultBound)).Close();
            },
            CancellationToken.None,
            TaskCreationOptions.LongRunning,
            TaskScheduler.Default);

    private sealed class Client(BcTlsCrypto crypto, TlsPskIdentity identity, bool extendedMasterSecret) : PskTlsClient(crypto, identity)
    {
        public override bool ShouldUseExtendedMasterSecret() => extendedMasterSecret;

        public override int GetHandshakeTimeoutMillis() => (int)Wait.DefaultBound.TotalMilliseconds;

        protected override ProtocolVersion[] GetSupportedVersions() => ProtocolVersion.DTLSv12.Only();

        protected override int[] GetSupportedCipherSuites() => [CipherSuite.TLS_PSK_WITH_AES_128_CCM_8];
    }

    private sealed class Socket(UdpClient socket, TimeSpan bound) : DatagramTransport
    {
        public int GetReceiveLimit() => 1500;

        public int GetSendLimit() => 1400;

        public int Receive(byte[] buf, int off, int len, int waitMillis)
        {
            socket.Client.ReceiveTimeout = waitMillis == 0 ? (int)bound.TotalMilliseconds : waitMillis;
            try
            {
                return socket.Client.Receive(buf, off, len, SocketFlags.None);
            }
            catch (SocketException e) when (e.SocketErrorCode == SocketError.TimedOut)
            {
                return -1;
            }
        }

        public int Receive(Span<byte> buffer, int waitMillis)
        {
            byte[] received = new byte[buffer.Length];
            int length = Receive(received, 0, received.Length, waitMillis);
            received.AsSpan(0, Math.Max(length, 0)).CopyTo(buffer);
            return length;
        }

        public void Send(byte[] buf, int off, int len) => socket.Client.Send(buf, off, len, SocketFlags.None);

        public void Send(ReadOnlySpan<byte> buffer) => socket.Client.Send(buffer);

        public void Close()
        {
        }
    }
}
