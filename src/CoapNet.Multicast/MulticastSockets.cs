using System.Net;
using System.Net.NetworkInformation;
using System.Net.Sockets;
using CoapNet.Channels;
using CoapNet.Transports;

namespace CoapNet.Multicast;

/// <summary>
/// The sockets of one multicast port, shared by the unicast endpoint and one endpoint per group: an IPv4 socket bound to
/// 0.0.0.0 and an IPv6 one bound to [::] (IPv6 only), each joined to its family's groups, each with IP_PKTINFO or
/// IPV6_PKTINFO on so every datagram says the address it was sent to. That address decides whose it is: a group's
/// endpoint (a group request), or the unicast endpoint. Answers go out of the same wildcard-bound sockets, so the OS
/// gives them the interface's unicast address as their source and the port the request was sent to (RFC 7252 section 8.2).
/// </summary>
/// <remarks>
/// Why one set of sockets and the destination address, rather than a socket bound to each group beside the server's
/// own: on Linux a datagram to a group goes to every socket bound to the port whose address matches, the wildcard
/// socket of the unicast endpoint included (IP_MULTICAST_ALL is on by default), so that endpoint would answer group
/// requests at once, errors and all; and a socket bound to a group address cannot answer from the unicast one. With the
/// destination of each datagram known, each request reaches one endpoint, the one that knows how it came.
/// </remarks>
internal sealed class MulticastSockets
{
    /// <summary>How many messages of the group endpoints are remembered for the ACK or Reset that may answer them (<see cref="GroupReplies"/>).</summary>
    private const int RepliesRemembered = 4096;

    private readonly CoapMulticastOptions _options;
    private readonly List<MulticastEndpointTransport> _groups = [];
    private readonly object _gate = new();
    private Socket? _v4;
    private Socket? _v6;
    private int _port;
    private int _open;
    private bool _started;
    private bool _closed;

    public MulticastSockets(CoapMulticastOptions options)
    {
        _options = options;
        Unicast = new MulticastEndpointTransport(this, group: null);
        foreach (IPAddress group in options.Groups)
        {
            _groups.Add(new MulticastEndpointTransport(this, group));
        }

        _open = 1 + _groups.Count;
    }

    /// <summary>The endpoint for requests sent to this host's own addresses.</summary>
    public MulticastEndpointTransport Unicast { get; }

    /// <summary>One endpoint per group, in the order of <see cref="CoapMulticastOptions.Groups"/>.</summary>
    public IReadOnlyList<MulticastEndpointTransport> Groups => _groups;

    /// <summary>The messages the group endpoints sent, for the ACK or Reset that answers one at the unicast address.</summary>
    public GroupReplies Replies { get; } = new(RepliesRemembered);

    /// <summary>The port, once bound.</summary>
    public int Port
    {
        get
        {
            EnsureBound();
            return _port;
        }
    }

    /// <summary>Binds both sockets and joins the groups, the first time any endpoint asks.</summary>
    /// <exception cref="CoapBindException">The port is taken, or a group cannot be joined on an interface named.</exception>
    public void EnsureBound()
    {
        lock (_gate)
        {
            ObjectDisposedException.ThrowIf(_closed, this);
            if (_v4 is not null)
            {
                return;
            }

            Socket v4 = Open(AddressFamily.InterNetwork, _options.Port);
            Socket? v6 = null;
            try
            {
                int port = ((IPEndPoint)v4.LocalEndPoint!).Port;
                if (Socket.OSSupportsIPv6)
                {
                    v6 = Open(AddressFamily.InterNetworkV6, port);
                }

                Join(v4, v6);
                (_v4, _v6, _port) = (v4, v6, port);
            }
            catch
            {
                v4.Dispose();
                v6?.Dispose();
                throw;
            }
        }
    }

    /// <summary>Starts the receive threads with the first endpoint that starts; datagrams for one not started yet are dropped.</summary>
    public void Start()
    {
        EnsureBound();
        lock (_gate)
        {
            if (_started)
            {
                return;
            }

            _started = true;
            StartReceiving(_v4!);
            if (_v6 is not null)
            {
                StartReceiving(_v6);
            }
        }
    }

    /// <summary>Sends from the socket of the destination's family.</summary>
    public void Send(ReadOnlySpan<byte> datagram, IPEndPoint remote)
    {
        (Socket? socket, IPEndPoint target) = SocketFor(remote);
        if (socket is null)
        {
            return;
        }

        try
        {
            socket.SendTo(datagram, SocketFlags.None, target);
        }
        catch (SocketException)
        {
            // As the network would: a datagram that cannot go (no route, a full buffer) is lost.
        }
    }

    /// <summary>Sends from the socket of the destination's family.</summary>
    public async ValueTask SendAsync(ReadOnlyMemory<byte> datagram, IPEndPoint remote, CancellationToken cancellationToken)
    {
        (Socket? socket, IPEndPoint target) = SocketFor(remote);
        if (socket is null)
        {
            return;
        }

        try
        {
            await socket.SendToAsync(datagram, SocketFlags.None, target, cancellationToken).ConfigureAwait(false);
        }
        catch (SocketException)
        {
            // Lost, as in Send.
        }
    }

    /// <summary>One endpoint let go of the sockets; the last one closes them.</summary>
    public void Release()
    {
        lock (_gate)
        {
            if (--_open > 0 || _closed)
            {
                return;
            }

            _closed = true;
        }

        _v4?.Dispose();
        _v6?.Dispose();
    }

    private static Socket Open(AddressFamily family, int port)
    {
        Socket socket = new(family, SocketType.Dgram, ProtocolType.Udp);
        IPEndPoint bind = new(family == AddressFamily.InterNetwork ? IPAddress.Any : IPAddress.IPv6Any, port);
        try
        {
            if (family == AddressFamily.InterNetworkV6)
            {
                socket.DualMode = false;
                socket.SetSocketOption(SocketOptionLevel.IPv6, SocketOptionName.PacketInformation, true);
            }
            else
            {
                socket.SetSocketOption(SocketOptionLevel.IP, SocketOptionName.PacketInformation, true);
            }

            socket.Bind(bind);
            return socket;
        }
        catch (SocketException e)
        {
            socket.Dispose();
            throw new CoapBindException(CoapPeer.UdpScheme, bind, e);
        }
    }

    /// <summary>Joins every group of its family on every interface chosen (RFC 7252 section 12.8's groups by default).</summary>
    private void Join(Socket v4, Socket? v6)
    {
        List<int> interfaces = InterfaceIndexes(_options.Interfaces);
        foreach (IPAddress group in _options.Groups)
        {
            Socket? socket = group.AddressFamily == AddressFamily.InterNetwork ? v4 : v6;
            if (socket is null)
            {
                continue;
            }

            foreach (int index in interfaces)
            {
                try
                {
                    if (socket == v4)
                    {
                        socket.SetSocketOption(SocketOptionLevel.IP, SocketOptionName.AddMembership, new MulticastOption(group, index));
                    }
                    else
                    {
                        socket.SetSocketOption(SocketOptionLevel.IPv6, SocketOptionName.AddMembership, new IPv6MulticastOption(group, index));
                    }
                }
                catch (SocketException e) when (_options.Interfaces.Count == 0)
                {
                    // Every interface was asked for: one without this family (no IPv4 address, IPv6 off) is left out. An
                    // interface named is the operator's choice, and its failure is reported.
                    _ = e;
                }
                catch (SocketException e)
                {
                    throw new CoapBindException(CoapPeer.UdpScheme, new IPEndPoint(group, _options.Port), e);
                }
            }
        }
    }

    /// <summary>The indexes of the interfaces named, or of every one that is up and can multicast, loopback aside.</summary>
    internal static List<int> InterfaceIndexes(IList<string> names)
    {
        List<int> indexes = [];
        NetworkInterface[] all = NetworkInterface.GetAllNetworkInterfaces();
        if (names.Count > 0)
        {
            foreach (string name in names)
            {
                NetworkInterface nic = Array.Find(all, n => string.Equals(n.Name, name, StringComparison.Ordinal))
                    ?? throw new ArgumentException($"There is no network interface named '{name}' (there are: {string.Join(", ", Array.ConvertAll(all, n => n.Name))}).", nameof(names));
                indexes.Add(IndexOf(nic));
            }

            return indexes;
        }

        foreach (NetworkInterface nic in all)
        {
            if (nic.NetworkInterfaceType != NetworkInterfaceType.Loopback && nic.SupportsMulticast && nic.OperationalStatus == OperationalStatus.Up)
            {
                indexes.Add(IndexOf(nic));
            }
        }

        return indexes;
    }

    private static int IndexOf(NetworkInterface nic)
    {
        IPInterfaceProperties properties = nic.GetIPProperties();
        try
        {
            return properties.GetIPv6Properties().Index;
        }
        catch (NetworkInformationException)
        {
            return properties.GetIPv4Properties().Index;
        }
    }

    private (Socket? Socket, IPEndPoint Target) SocketFor(IPEndPoint remote)
    {
        if (remote.Address.IsIPv4MappedToIPv6)
        {
            remote = new IPEndPoint(remote.Address.MapToIPv4(), remote.Port);
        }

        return (remote.AddressFamily == AddressFamily.InterNetwork ? _v4 : _v6, remote);
    }

    private void StartReceiving(Socket socket)
    {
        new Thread(() => Receive(socket))
        {
            IsBackground = true,
            Name = "CoAP multicast receive " + socket.AddressFamily,
        }.Start();
    }

    private void Receive(Socket socket)
    {
        byte[] buffer = new byte[65535];
        IPEndPoint any = new(socket.AddressFamily == AddressFamily.InterNetwork ? IPAddress.Any : IPAddress.IPv6Any, 0);
        while (true)
        {
            SocketFlags flags = SocketFlags.None;
            EndPoint remote = any;
            int received;
            IPPacketInformation packet;
            try
            {
                received = socket.ReceiveMessageFrom(buffer, 0, buffer.Length, ref flags, ref remote, out packet);
            }
            catch (ObjectDisposedException)
            {
                return;
            }
            catch (SocketException) when (Volatile.Read(ref _closed))
            {
                return;
            }
            catch (SocketException)
            {
                // An ICMP error for an earlier send, reported on this receive: nothing arrived, the socket goes on.
                continue;
            }

            Dispatch(buffer.AsSpan(0, received), (IPEndPoint)remote, packet.Address);
        }
    }

    /// <summary>
    /// Hands a datagram to the endpoint of the address it was sent to; an ACK or a Reset sent to the unicast address that
    /// answers a group endpoint's message (a notification of an observation a group request made) to that endpoint.
    /// </summary>
    private void Dispatch(ReadOnlySpan<byte> datagram, IPEndPoint remote, IPAddress? destination)
    {
        if (destination is null || !CoapGroups.IsGroup(destination))
        {
            (Replies.Take(datagram, remote) ?? Unicast).Deliver(datagram, remote);
            return;
        }

        foreach (MulticastEndpointTransport group in _groups)
        {
            if (SameAddress(group.Group!, destination))
            {
                if (GroupDatagrams.IsGroupRequest(datagram))
                {
                    group.Deliver(datagram, remote);
                }

                return;
            }
        }

        // A group this server did not join (another socket of the host did, and Linux delivers it to every socket on the
        // port): not ours to answer.
    }

    /// <summary>Equal addresses whatever their IPv6 zone: a received destination carries none.</summary>
    private static bool SameAddress(IPAddress a, IPAddress b)
    {
        if (a.AddressFamily != b.AddressFamily)
        {
            return false;
        }

        Span<byte> x = stackalloc byte[16];
        Span<byte> y = stackalloc byte[16];
        return a.TryWriteBytes(x, out int length) && b.TryWriteBytes(y, out _) && x[..length].SequenceEqual(y[..length]);
    }
}
