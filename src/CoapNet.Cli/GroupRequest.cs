using System.Globalization;
using System.Net;
using CoapNet.Messages;
using CoapNet.Multicast;

namespace CoapNet.Cli;

/// <summary>
/// <c>coap discover|get coap://224.0.1.187/...</c> and <c>coap://[ff02::fd%eth0]/...</c>: a URI whose host is a group
/// sends one NON request to it and lists every member that answers within the window (-B, default the leisure of RFC
/// 7252 section 8.2 and a second), each under a line with its address and response code.
/// </summary>
internal static class GroupRequest
{
    /// <summary>How long responses are gathered without -B: DEFAULT_LEISURE and a second for the way back.</summary>
    private static readonly TimeSpan DefaultWindow = CoapMulticastOptions.DefaultLeisure + TimeSpan.FromSeconds(1);

    /// <summary>True when <paramref name="uri"/> is a coap:// URI of a multicast address.</summary>
    public static bool IsGroup(Uri uri)
        => string.Equals(uri.Scheme, Channels.CoapPeer.UdpScheme, StringComparison.OrdinalIgnoreCase)
            && IPAddress.TryParse(uri.DnsSafeHost.Replace("%25", "%", StringComparison.Ordinal), out IPAddress? address)
            && CoapGroups.IsGroup(address);

    /// <summary>
    /// Sends <paramref name="request"/> to the group and shows each response with <paramref name="show"/> after its
    /// responder's line. Exit code: 0 when any member answered, 3 when none did.
    /// </summary>
    public static async Task<int> RunAsync(CoapMessage request, Uri uri, double? seconds, Terminal terminal, Action<CoapMessage> show, CancellationToken cancellationToken)
    {
        TimeSpan window = seconds is double bound ? TimeSpan.FromSeconds(bound) : DefaultWindow;
        int answered = 0;
        TextWriter output = terminal.Output.Profile.Out.Writer;
        try
        {
            await foreach (CoapGroupResponse response in new CoapGroupClient().SendAsync(request, uri, window, cancellationToken).ConfigureAwait(false))
            {
                answered++;
                output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{response.Responder}: {response.Response.Code}"));
                show(response.Response);
                output.Flush();
            }
        }
        catch (ArgumentException e)
        {
            terminal.WriteError(e.Message);
            return ExitCodes.Usage;
        }
        catch (System.Net.Sockets.SocketException e)
        {
            terminal.WriteError($"cannot send to {uri.Host}: {e.Message}");
            return ExitCodes.Error;
        }

        if (answered == 0)
        {
            terminal.WriteError(string.Create(CultureInfo.InvariantCulture, $"no member of {uri.Host} answered within {window.TotalSeconds:0.#} s"));
            return ExitCodes.NoAnswer;
        }

        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{answered} member(s) answered"));
        output.Flush();
        return ExitCodes.Success;
    }
}
