using System.CommandLine;
using CoapNet.Cli.Output;
using CoapNet.Client;
using CoapNet.Messages;

namespace CoapNet.Cli.Requests;

/// <summary>
/// What shapes a request beyond its method and URI, in libcoap's letters where it has one: -A (Accept), -q (Uri-Query),
/// -O (any option), -b (block size, and the block to start at); and how its answer is shown: --raw, --pretty.
/// Shared by the request verbs and observe.
/// </summary>
internal sealed class RequestOptions
{
    /// <summary>-A: the Content-Format to ask for.</summary>
    public Option<ushort?> Accept { get; } = FormatOption("--accept", "-A", "The Content-Format to ask for (Accept option)");

    /// <summary>-q: a Uri-Query argument, repeatable.</summary>
    public Option<string[]> Query { get; } = new("--query", "-q") { Description = "A Uri-Query argument such as 'rt=temp'; repeat for several. Added after any query in the URI.", HelpName = "NAME=VALUE" };

    /// <summary>-O: any option by number, repeatable.</summary>
    public Option<CoapOptionEntry[]> Options { get; } = new("--option", "-O")
    {
        Description = "Add an option, libcoap-style: NUM,VALUE with the value as text, a number for a uint option, or 0x-prefixed hex (-O 2048,0x0a0b); "
            + "NUM alone for an empty option. NUM may be an option's name (If-None-Match). Repeat for several.",
        HelpName = "NUM,VALUE",
        CustomParser = result =>
        {
            CoapOptionEntry[] parsed = new CoapOptionEntry[result.Tokens.Count];
            for (int i = 0; i < parsed.Length; i++)
            {
                if (!OptionValues.TryParseOption(result.Tokens[i].Value, out parsed[i], out string? error))
                {
                    result.AddError(error!);
                    return [];
                }
            }

            return parsed;
        },
        AllowMultipleArgumentsPerToken = false,
    };

    /// <summary>-b: block size, and the block to start at.</summary>
    public Option<(int Number, int Size)?> Block { get; } = new("--block-size", "-b")
    {
        Description = "The block size for a body in blocks (RFC 7959), 16 to 1024, libcoap-style [NUM,]SIZE: a download asks for SIZE-byte blocks "
            + "from block NUM on (an early Block2, section 2.4); an upload sends SIZE-byte Block1 blocks.",
        HelpName = "[NUM,]SIZE",
        CustomParser = result =>
        {
            string text = result.Tokens.Count > 0 ? result.Tokens[0].Value : string.Empty;
            if (OptionValues.TryParseBlock(text, out (int Number, int Size) block, out string? error))
            {
                return block;
            }

            result.AddError(error!);
            return null;
        },
    };

    /// <summary>--raw: the payload's bytes as they came, even on a terminal.</summary>
    public Option<bool> Raw { get; } = new("--raw") { Description = "Write the payload's bytes as they came, even on a terminal (no CBOR diagnostic notation, no JSON indentation)." };

    /// <summary>--pretty: the payload shown for reading, even when piped.</summary>
    public Option<bool> Pretty { get; } = new("--pretty") { Description = "Show the payload for reading even when output is piped: CBOR in diagnostic notation, JSON indented (the default on a terminal)." };

    /// <summary>An option that takes a Content-Format by name or number; an unknown name is a usage error.</summary>
    /// <param name="name">The long name.</param>
    /// <param name="alias">The letter.</param>
    /// <param name="description">What it is for.</param>
    /// <returns>The option.</returns>
    public static Option<ushort?> FormatOption(string name, string alias, string description) => new(name, alias)
    {
        Description = $"{description}: a name ({ContentFormats.Names}), a media type, or a number.",
        HelpName = "FORMAT",
        CustomParser = result =>
        {
            string text = result.Tokens.Count > 0 ? result.Tokens[0].Value : string.Empty;
            if (ContentFormats.TryParse(text, out ushort format))
            {
                return format;
            }

            result.AddError($"'{text}' is not a Content-Format: use a name ({ContentFormats.Names}), a media type or a number from 0 to 65535.");
            return null;
        },
    };

    /// <summary>Adds the options to a command.</summary>
    /// <param name="command">The command.</param>
    public void AddTo(Command command)
    {
        command.Add(Accept);
        command.Add(Query);
        command.Add(Options);
        command.Add(Block);
        command.Add(Raw);
        command.Add(Pretty);
        NotBoth(command, Raw, Pretty, "Give --raw or --pretty, not both.");
    }

    /// <summary>Makes giving both <paramref name="one"/> and <paramref name="other"/> a usage error.</summary>
    /// <param name="command">The command that has both.</param>
    /// <param name="one">One option.</param>
    /// <param name="other">The other.</param>
    /// <param name="error">What the error says.</param>
    public static void NotBoth(Command command, Option one, Option other, string error)
        => command.Validators.Add(result =>
        {
            if (result.GetResult(one) is not null && result.GetResult(other) is not null)
            {
                result.AddError(error);
            }
        });

    /// <summary>The request: method and URI, then -q, -A, the early Block2 of -b for a method without a body, then every -O.</summary>
    /// <param name="parse">The parse result.</param>
    /// <param name="method">The method.</param>
    /// <param name="uri">The URI.</param>
    /// <param name="type">CON or NON.</param>
    /// <returns>The request.</returns>
    public CoapMessage Build(ParseResult parse, CoapCode method, Uri uri, CoapMessageType type)
    {
        CoapMessage request = CoapMessage.CreateRequest(method, uri, type);
        foreach (string argument in parse.GetValue(Query) ?? [])
        {
            request.Options.Add(CoapOptionNumber.UriQuery, argument);
        }

        request.Accept = parse.GetValue(Accept);
        if (parse.GetValue(Block) is { } block && (method == CoapCode.Get || method == CoapCode.Fetch))
        {
            // RFC 7959 section 2.4: an early Block2 in the request asks for that block at that size.
            request.Block2 = new CoapBlock(block.Number, false, CoapBlock.GetSizeExponent(block.Size));
        }

        foreach (CoapOptionEntry option in parse.GetValue(Options) ?? [])
        {
            request.Options.Add(option);
        }

        return request;
    }

    /// <summary>-b's size for the client's uploads (Block1, RFC 7959 section 2.3).</summary>
    /// <param name="parse">The parse result.</param>
    /// <param name="options">The client's options.</param>
    public void Configure(ParseResult parse, CoapClientOptions options)
    {
        if (parse.GetValue(Block) is { } block)
        {
            options.Endpoint.Blockwise.BlockSize = block.Size;
        }
    }

    /// <summary>How the answer's payload is written.</summary>
    /// <param name="parse">The parse result.</param>
    /// <param name="terminal">The terminal.</param>
    /// <returns>Raw or pretty.</returns>
    public PayloadStyle Style(ParseResult parse, Terminal terminal) => terminal.StyleFor(parse.GetValue(Raw), parse.GetValue(Pretty));
}
