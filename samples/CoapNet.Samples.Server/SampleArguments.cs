using System.CommandLine;
using System.CommandLine.Help;
using System.CommandLine.Parsing;
using System.Net;
using CoapNet.Transports;

namespace CoapNet.Samples.Server;

/// <summary>
/// The sample server's command line, read by System.CommandLine as the coap tool's is: every flag with its default, and
/// <c>--help</c>. The benchmark scripts (benchmarks/*.sh) pass these flags, so their names stay.
/// </summary>
internal sealed class SampleArguments
{
    private static readonly Option<int> PortFlag = PortOption("--port", "The UDP port of coap:// (0: a free port the OS picks).", 5683);
    private static readonly Option<int> TcpPortFlag = PortOption("--tcp-port", "The TCP port of coap+tcp:// (RFC 8323); 0 turns it off.", 5683);
    private static readonly Option<int> DtlsPortFlag = PortOption("--dtls-port", "The UDP port of coaps:// (DTLS 1.2 with a pre-shared key); 0 turns it off.", 5684);
    private static readonly Option<int> TlsPortFlag = PortOption("--tls-port", "The TCP port of coaps+tcp:// (TLS with a certificate); 0 turns it off.", 5684);
    private static readonly Option<int> HttpPortFlag = PortOption("--http-port", "The HTTP port of coap+ws:// (RFC 8323 section 4) and the explorer page at /; 0 turns both off.", 8683);
    private static readonly Option<IPAddress> AddressFlag = new("--address")
    {
        Description = "The address to listen on, such as 127.0.0.1. Default: every interface ([::], dual-stack).",
        HelpName = "IP",
        DefaultValueFactory = _ => IPAddress.IPv6Any,
        CustomParser = result =>
        {
            string text = result.Tokens.Count > 0 ? result.Tokens[0].Value : string.Empty;
            if (IPAddress.TryParse(text, out IPAddress? address))
            {
                return address;
            }

            result.AddError($"--address: '{text}' is not an IP address.");
            return null;
        },
    };

    private static readonly Option<int> ReceiveSocketsFlag = new("--receive-sockets")
    {
        Description = $"UDP sockets sharing coap's port (SO_REUSEPORT on Linux), one receive thread each (1 to {UdpTransportOptions.MaxReceiveSockets}).",
        HelpName = "N",
        DefaultValueFactory = _ => 1,
        Validators =
        {
            result =>
            {
                if (result.GetValueOrDefault<int>() is < 1 or > UdpTransportOptions.MaxReceiveSockets)
                {
                    result.AddError($"--receive-sockets must be from 1 to {UdpTransportOptions.MaxReceiveSockets}.");
                }
            },
        },
    };

    private static readonly Option<bool> MulticastFlag = new("--multicast")
    {
        Description = "Also join All CoAP Nodes (224.0.1.187, ff02::fd, ff05::fd, RFC 7252 section 12.8) on --port, every address, and answer group requests (RFC 7252 section 8).",
    };

    private static readonly Option<string?> MulticastInterfaceFlag = new("--multicast-interface")
    {
        Description = "Join the groups on this interface only (such as eth0). Default: every interface that is up.",
        HelpName = "NAME",
    };

    private static readonly Option<double?> MulticastLeisureFlag = new("--multicast-leisure")
    {
        Description = "The leisure in seconds: a group request is answered at a random point within it (RFC 7252 section 8.2). Default: 5.",
        HelpName = "SECONDS",
    };

    private static readonly Option<string> PskIdentityFlag = TextOption("--psk-identity", "ID", "The identity of coaps' demo pre-shared key (printed at start).", "coapnet");
    private static readonly Option<string> PskKeyFlag = TextOption("--psk-key", "KEY", "The demo pre-shared key itself (RFC 7252 section 9.1.3.1).", "sample-secret");
    private static readonly Option<FileInfo?> PskFileFlag = FileOption("--psk-file", "coaps' pre-shared keys from FILE (\"identity hexkey\" a line, as benchmarks/tools/coap-fleet.c writes it) instead of the demo key, and /fleet/{identity} for those devices.");
    private static readonly Option<FileInfo?> CertFlag = FileOption("--cert", "The PEM certificate of coaps+tcp, with --key. Default: a self-signed one made at start.");
    private static readonly Option<FileInfo?> KeyFlag = FileOption("--key", "The PEM private key of --cert.");

    private SampleArguments(ParseResult parse)
    {
        UdpPort = parse.GetValue(PortFlag);
        TcpPort = parse.GetValue(TcpPortFlag);
        DtlsPort = parse.GetValue(DtlsPortFlag);
        TlsPort = parse.GetValue(TlsPortFlag);
        HttpPort = parse.GetValue(HttpPortFlag);
        Address = parse.GetValue(AddressFlag) ?? IPAddress.IPv6Any;
        ReceiveSockets = parse.GetValue(ReceiveSocketsFlag);
        PskIdentity = parse.GetValue(PskIdentityFlag)!;
        PskKey = parse.GetValue(PskKeyFlag)!;
        PskFile = parse.GetValue(PskFileFlag)?.FullName;
        CertFile = parse.GetValue(CertFlag)?.FullName;
        KeyFile = parse.GetValue(KeyFlag)?.FullName;
        Multicast = parse.GetValue(MulticastFlag);
        MulticastInterface = parse.GetValue(MulticastInterfaceFlag);
        MulticastLeisure = parse.GetValue(MulticastLeisureFlag) is double seconds ? TimeSpan.FromSeconds(seconds) : null;
    }

    /// <summary>--port: coap's UDP port.</summary>
    public int UdpPort { get; }

    /// <summary>--tcp-port: coap+tcp's port, 0 for none.</summary>
    public int TcpPort { get; }

    /// <summary>--dtls-port: coaps' port, 0 for none.</summary>
    public int DtlsPort { get; }

    /// <summary>--tls-port: coaps+tcp's port, 0 for none.</summary>
    public int TlsPort { get; }

    /// <summary>--http-port: the HTTP port of coap+ws and the explorer, 0 for none.</summary>
    public int HttpPort { get; }

    /// <summary>--address: where every endpoint listens.</summary>
    public IPAddress Address { get; }

    /// <summary>--receive-sockets: UDP sockets on coap's port.</summary>
    public int ReceiveSockets { get; }

    /// <summary>--psk-identity: the demo key's identity.</summary>
    public string PskIdentity { get; }

    /// <summary>--psk-key: the demo key.</summary>
    public string PskKey { get; }

    /// <summary>--psk-file: the fleet's key file, or null for the demo key alone.</summary>
    public string? PskFile { get; }

    /// <summary>--cert: coaps+tcp's PEM certificate, or null for a self-signed one.</summary>
    public string? CertFile { get; }

    /// <summary>--key: its PEM key.</summary>
    public string? KeyFile { get; }

    /// <summary>--multicast: coap's port also serves the All CoAP Nodes groups.</summary>
    public bool Multicast { get; }

    /// <summary>--multicast-interface: the one interface the groups are joined on, or null for every one.</summary>
    public string? MulticastInterface { get; }

    /// <summary>--multicast-leisure: the leisure, or null for the library's default.</summary>
    public TimeSpan? MulticastLeisure { get; }

    /// <summary>
    /// Reads <paramref name="args"/>: the arguments, or null with the exit code when there is nothing to run: 0 after
    /// <c>--help</c> printed the usage, 2 after a usage error was printed to standard error.
    /// </summary>
    /// <param name="args">The command line.</param>
    /// <param name="exitCode">The exit code when null is returned.</param>
    /// <returns>The arguments, or null.</returns>
    public static SampleArguments? Parse(string[] args, out int exitCode)
    {
        RootCommand root = new("The CoapNet sample server: coap and coap+tcp on 5683, coaps and coaps+tcp on 5684, coap+ws and the explorer page on HTTP 8683, every interface. Ctrl+C stops it.")
        {
            PortFlag, TcpPortFlag, DtlsPortFlag, TlsPortFlag, HttpPortFlag, AddressFlag, ReceiveSocketsFlag, MulticastFlag, MulticastInterfaceFlag, MulticastLeisureFlag,
            PskIdentityFlag, PskKeyFlag, PskFileFlag, CertFlag, KeyFlag,
        };
        ParseResult parse = root.Parse(args);
        if (parse.Action is HelpAction)
        {
            exitCode = parse.Invoke();
            return null;
        }

        List<string> errors = [.. parse.Errors.Select(error => error.Message)];
        if (errors.Count == 0 && (parse.GetValue(CertFlag) is null) != (parse.GetValue(KeyFlag) is null))
        {
            errors.Add("--cert FILE and --key FILE go together: the PEM certificate of coaps+tcp and its private key.");
        }

        if (errors.Count == 0 && !parse.GetValue(MulticastFlag) && (parse.GetValue(MulticastInterfaceFlag) is not null || parse.GetValue(MulticastLeisureFlag) is not null))
        {
            errors.Add("--multicast-interface and --multicast-leisure go with --multicast.");
        }

        if (errors.Count == 0 && parse.GetValue(MulticastLeisureFlag) is < 0)
        {
            errors.Add("--multicast-leisure must not be negative.");
        }

        if (errors.Count > 0)
        {
            foreach (string error in errors)
            {
                Console.Error.WriteLine(error);
            }

            Console.Error.WriteLine("Run with --help for the usage.");
            exitCode = 2;
            return null;
        }

        exitCode = 0;
        return new SampleArguments(parse);
    }

    /// <summary>
    /// <paramref name="args"/> with each flag of <paramref name="moves"/> set to its new value: replaced where the command
    /// line gave it (<c>--port 5683</c>, <c>--port=5683</c>), added where it did not; quoted for a POSIX shell where needed.
    /// </summary>
    /// <param name="args">The command line as given.</param>
    /// <param name="moves">Each flag, such as "--tcp-port", and its new value.</param>
    /// <returns>The command line, as one string a shell takes as written.</returns>
    public static string Moved(IReadOnlyList<string> args, IReadOnlyDictionary<string, int> moves)
    {
        List<string> moved = [.. args];
        foreach ((string flag, int value) in moves)
        {
            string text = value.ToString(System.Globalization.CultureInfo.InvariantCulture);
            int at = moved.IndexOf(flag);
            int inline = moved.FindIndex(arg => arg.StartsWith(flag + "=", StringComparison.Ordinal) || arg.StartsWith(flag + ":", StringComparison.Ordinal));
            if (at >= 0 && at + 1 < moved.Count)
            {
                moved[at + 1] = text;
            }
            else if (inline >= 0)
            {
                moved[inline] = $"{flag}={text}";
            }
            else
            {
                moved.AddRange([flag, text]);
            }
        }

        return string.Join(' ', moved.Select(Quote));
    }

    // A POSIX shell takes letters, digits and -_.:/=@[] as they are; anything else goes in single quotes.
    private static string Quote(string arg)
        => arg.Length > 0 && arg.All(c => char.IsAsciiLetterOrDigit(c) || "-_.:/=@[],".Contains(c)) ? arg : $"'{arg.Replace("'", "'\\''", StringComparison.Ordinal)}'";

    private static Option<int> PortOption(string name, string description, int defaultPort) => new(name)
    {
        Description = description,
        HelpName = "PORT",
        DefaultValueFactory = _ => defaultPort,
        Validators =
        {
            result =>
            {
                if (result.GetValueOrDefault<int>() is < 0 or > IPEndPoint.MaxPort)
                {
                    result.AddError($"{name} must be a port from 0 to {IPEndPoint.MaxPort}.");
                }
            },
        },
    };

    private static Option<string> TextOption(string name, string helpName, string description, string defaultValue) => new(name)
    {
        Description = description,
        HelpName = helpName,
        DefaultValueFactory = _ => defaultValue,
        Validators =
        {
            result =>
            {
                if (string.IsNullOrEmpty(result.GetValueOrDefault<string>()))
                {
                    result.AddError($"{name} must not be empty.");
                }
            },
        },
    };

    private static Option<FileInfo?> FileOption(string name, string description) => new(name)
    {
        Description = description,
        HelpName = "FILE",
    };
}
