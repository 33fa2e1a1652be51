using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;
using CoapNet.Messages;
using CoapNet.Tests.Interop;

namespace CoapNet.Tests.Server;

/// <summary>
/// The sample-resource suite through libcoap's coap-client-notls, run once per request. With -v 6 it
/// prints each PDU it sends and receives on stdout ("v:1 t:ACK c:2.05 i:73fb {01} [ ETag:0x.. ] :: ..."),
/// from which the test reads the code, type and options; -o writes a success payload to a file;
/// an error's diagnostic payload is printed on stderr after the code ("4.05 Allowed: GET").
/// </summary>
public abstract partial class SampleResourcesThroughLibCoapClient : SampleResourceBehaviour
{
    private protected SampleResourcesThroughLibCoapClient(string scheme)
        : base(scheme)
    {
    }

    private static readonly TimeSpan ProcessTimeout = TimeSpan.FromSeconds(30);

    private protected override async Task<SampleReply> SendAsync(SampleRequest request)
    {
        string output = Path.Combine(Path.GetTempPath(), $"coapnet-server-tests-{Guid.NewGuid():N}.bin");
        // -B is how long coap-client waits for the whole answer, not a bound this test asserts: on a loaded
        // machine one block of /large may go unanswered past libcoap's ACK_TIMEOUT (2-3 s) and be retransmitted
        // (RFC 7252 section 4.2), so leave room for a few retransmissions (a 5 s ceiling failed once in the suite).
        List<string> arguments = ["-B", "20", "-v", "6", "-o", output, "-m", request.Method.Name!.ToLowerInvariant()];
        if (request.Payload is not null)
        {
            arguments.AddRange(["-e", request.Payload]);
        }

        if (request.ContentFormat is ushort format)
        {
            arguments.AddRange(["-t", format.ToString(CultureInfo.InvariantCulture)]);
        }

        if (request.Accept is ushort accept)
        {
            arguments.AddRange(["-A", accept.ToString(CultureInfo.InvariantCulture)]);
        }

        foreach ((ushort number, byte[] value) in request.Options)
        {
            // -O N for an empty value (If-None-Match), -O N,0xHEX for bytes (an ETag in If-Match).
            string option = number.ToString(CultureInfo.InvariantCulture);
            arguments.AddRange(["-O", value.Length == 0 ? option : $"{option},0x{Convert.ToHexString(value)}"]);
        }

        arguments.Add(Server.Uri(request.PathAndQuery, Scheme).ToString());

        Process process = LibCoap.Start(LibCoap.Client, [.. arguments]);
        try
        {
            Task<string> stdout = process.StandardOutput.ReadToEndAsync();
            Task<string> stderr = process.StandardError.ReadToEndAsync();
            using (CancellationTokenSource timeout = new(ProcessTimeout))
            {
                await process.WaitForExitAsync(timeout.Token);
            }

            return Parse(await stdout, await stderr, File.Exists(output) ? await File.ReadAllBytesAsync(output) : null);
        }
        finally
        {
            LibCoap.Stop(process);
            File.Delete(output);
        }
    }

    private static SampleReply Parse(string stdout, string stderr, byte[]? payloadFile)
    {
        // One response, or one per block of a block-wise body (RFC 7959): the first carries the code and options, -o the whole body.
        List<Match> responses = [.. ResponsePdu().Matches(stdout).Cast<Match>()];
        responses.Should().NotBeEmpty($"coap-client prints the responses it received; it printed:\n{stdout}\n{stderr}");
        Match response = responses[0];
        string dotted = response.Groups["code"].Value;
        CoapCode code = new(dotted[0] - '0', int.Parse(dotted.AsSpan(2), CultureInfo.InvariantCulture));

        ushort? contentFormat = null;
        byte[]? etag = null;
        List<string> location = [];
        foreach (string option in response.Groups["options"].Value.Split(", ", StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            int colon = option.IndexOf(':', StringComparison.Ordinal);
            string name = option[..colon];
            string value = option[(colon + 1)..];
            switch (name)
            {
                case "Content-Format":
                    contentFormat = ContentFormatNumber(value);
                    break;
                case "ETag":
                    etag = Convert.FromHexString(value.StartsWith("0x", StringComparison.Ordinal) ? value[2..] : value);
                    break;
                case "Location-Path":
                    location.Add(value);
                    break;
            }
        }

        byte[] payload = payloadFile ?? Diagnostic(stderr, dotted);
        string type = response.Groups["type"].Value;
        return new SampleReply(code, payload, contentFormat, etag, location, type != "ACK");
    }

    // coap-client prints an error response as its code, then the diagnostic payload if any.
    private static byte[] Diagnostic(string stderr, string code)
    {
        foreach (string line in stderr.Split('\n'))
        {
            if (line.StartsWith(code, StringComparison.Ordinal))
            {
                return Utf8(line.Length > code.Length + 1 ? line[(code.Length + 1)..].TrimEnd('\r') : null);
            }
        }

        return [];
    }

    // libcoap names the registered formats it knows and prints the number of any other.
    private static ushort ContentFormatNumber(string value) => value switch
    {
        "text/plain" => CoapContentFormat.TextPlain,
        "application/link-format" => CoapContentFormat.LinkFormat,
        "application/xml" => CoapContentFormat.Xml,
        "application/octet-stream" => CoapContentFormat.OctetStream,
        "application/exi" => CoapContentFormat.Exi,
        "application/json" => CoapContentFormat.Json,
        "application/cbor" => CoapContentFormat.Cbor,
        _ => ushort.Parse(value, CultureInfo.InvariantCulture),
    };

    [GeneratedRegex(@"^v:1 t:(?<type>CON|NON|ACK) c:(?<code>[245]\.\d\d) i:[0-9a-f]+ \{[0-9a-f]*\} \[(?<options>[^\]]*)\]", RegexOptions.Multiline | RegexOptions.CultureInvariant)]
    private static partial Regex ResponsePdu();
}

/// <summary>The sample-resource suite through coap-client-notls over UDP.</summary>
public sealed class SampleResourcesThroughLibCoapClientOverUdp() : SampleResourcesThroughLibCoapClient("coap");

/// <summary>The sample-resource suite through coap-client-notls over TCP (RFC 8323): CSM, then each request on one connection.</summary>
public sealed class SampleResourcesThroughLibCoapClientOverTcp() : SampleResourcesThroughLibCoapClient("coap+tcp");
