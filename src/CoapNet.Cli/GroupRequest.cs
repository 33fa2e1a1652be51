using System.Globalization;
using System.Net;
using CoapNet.Messages;
using CoapNet.Multicast;

namespace CoapNet.Cli;

/// <summary>
/// <c>coap discover|get|observe coap://224.0.1.187/...</c> and <c>coap://[ff02::fd%eth0]/...</c>: a URI whose host is a
/// group sends one NON request to it and lists every member that answers, each under a line with its address and
/// response code: within the window (-B, default the leisure of RFC 7252 section 8.2 and a second), or, observing (RFC
/// 7641 on a group), each member's notifications as they come until --count, --duration or Ctrl+C.
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
    public static Task<int> RunAsync(CoapMessage request, Uri uri, double? seconds, Terminal terminal, Action<CoapMessage> show, CancellationToken cancellationToken)
    {
        TimeSpan window = seconds is double bound ? TimeSpan.FromSeconds(bound) : DefaultWindow;
        string within = string.Create(CultureInfo.InvariantCulture, $"within {window.TotalSeconds:0.#} s");
        return ListAsync(() => new CoapGroupClient().SendAsync(request, uri, window, cancellationToken), uri, null, CancellationToken.None, terminal, show, within);
    }

    /// <summary>
    /// Observes <paramref name="request"/>'s resource on every member of the group and shows each member's response and
    /// notifications as they come, each under a line with its address, code and Observe value, until
    /// <paramref name="count"/> of them, <paramref name="seconds"/> or Ctrl+C (<paramref name="cancellationToken"/>);
    /// every member still observing is then deregistered (RFC 7641 section 3.6). Exit code: 0 when any member
    /// answered, 3 when none did.
    /// </summary>
    public static async Task<int> ObserveAsync(CoapMessage request, Uri uri, double? seconds, int? count, Terminal terminal, CancellationToken cancellationToken)
    {
        using CancellationTokenSource stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        if (seconds is double bound)
        {
            stop.CancelAfter(TimeSpan.FromSeconds(bound));
        }

        TextWriter output = terminal.Output.Profile.Out.Writer;
        return await ListAsync(
            () => new CoapGroupClient().ObserveAsync(request, uri, stop.Token),
            uri,
            count,
            stop.Token,
            terminal,
            response => output.WriteLine("  " + response.GetPayloadString()),
            "before the observation ended").ConfigureAwait(false);
    }

    /// <summary>
    /// Lists each response of <paramref name="start"/>'s sequence under its responder's line (with its Observe value when
    /// it has one), at most <paramref name="limit"/> of them or until <paramref name="stopped"/>, then how many members
    /// answered; usage and socket errors are reported as the other commands report them.
    /// </summary>
    private static async Task<int> ListAsync(Func<IAsyncEnumerable<CoapGroupResponse>> start, Uri uri, int? limit, CancellationToken stopped, Terminal terminal, Action<CoapMessage> show, string when)
    {
        int answered = 0;
        HashSet<IPEndPoint> members = [];
        TextWriter output = terminal.Output.Profile.Out.Writer;
        try
        {
            await foreach (CoapGroupResponse response in start().ConfigureAwait(false))
            {
                answered++;
                members.Add(response.Responder);
                string observe = response.Response.Observe is uint value ? string.Create(CultureInfo.InvariantCulture, $" (Observe {value})") : string.Empty;
                output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{response.Responder}: {response.Response.Code}{observe}"));
                show(response.Response);
                output.Flush();
                if (answered == limit)
                {
                    break;
                }
            }
        }
        catch (OperationCanceledException) when (stopped.IsCancellationRequested)
        {
            // An observation ends so (--duration, Ctrl+C), every member deregistered first: what came was listed as it came.
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

        if (members.Count == 0)
        {
            terminal.WriteError($"no member of {uri.Host} answered {when}");
            return ExitCodes.NoAnswer;
        }

        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{members.Count} member(s) answered"));
        output.Flush();
        return ExitCodes.Success;
    }
}
