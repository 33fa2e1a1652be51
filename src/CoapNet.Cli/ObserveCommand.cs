using System.CommandLine;
using System.Globalization;
using CoapNet.Cli.Output;
using CoapNet.Cli.Requests;
using CoapNet.Client;
using CoapNet.Messages;

namespace CoapNet.Cli;

/// <summary>
/// <c>coap observe URI</c>: registers as an observer (RFC 7641, a GET with Observe=0) and prints every notification
/// as it arrives, the registration's response first; ends after --count notifications, after --duration (libcoap's -s)
/// or on Ctrl+C, and deregisters on the way out with a GET carrying Observe=1 (section 3.6), waiting for the server's
/// answer so the server holds no observation of ours once the tool has exited. A group URI (coap://224.0.1.187/...)
/// observes on every member at once and lists each one's notifications under its address.
/// </summary>
internal static class ObserveCommand
{
    // How long the tool waits for the server to answer the deregistration: past one retransmission of a lost CON
    // (ACK_TIMEOUT 2 to 3 s, RFC 7252 section 4.8), and inside the grace System.CommandLine gives after Ctrl+C.
    private static readonly TimeSpan DeregistrationWait = TimeSpan.FromSeconds(7);

    /// <summary>How long the process may run after Ctrl+C: the deregistration's wait and a margin.</summary>
    public static readonly TimeSpan TerminationGrace = DeregistrationWait + TimeSpan.FromSeconds(3);

    /// <summary>Creates the command.</summary>
    /// <param name="terminal">Where output goes.</param>
    /// <returns>The command.</returns>
    public static Command Create(Terminal terminal)
    {
        ClientSession session = new();
        RequestOptions shape = new();
        Option<int?> count = new("--count", "-c")
        {
            Description = "Stop after this many notifications, the registration's response counting as the first.",
            HelpName = "N",
            Validators = { result => { if (result.GetValueOrDefault<int?>() is < 1) { result.AddError("--count must be at least 1."); } } },
        };
        Option<double?> duration = ClientSession.Seconds("--duration", "-s", "Stop after this many seconds (libcoap's -s). Without --count or --duration, observe until Ctrl+C.");

        Command command = new("observe", "Observe a resource (RFC 7641): print each notification as it arrives until --count, --duration or Ctrl+C, then deregister.");
        session.AddTo(command);
        shape.AddTo(command);
        command.Add(count);
        command.Add(duration);
        command.SetAction((parse, cancellationToken) =>
        {
            Uri uri = parse.GetValue(session.UriArgument)!;
            if (GroupRequest.IsGroup(uri))
            {
                // RFC 7641 on a group: one GET with Observe 0, each member's notifications listed under its address.
                CoapMessage group = shape.Build(parse, CoapCode.Get, uri, CoapMessageType.NonConfirmable);
                return GroupRequest.ObserveAsync(group, uri, parse.GetValue(duration), parse.GetValue(count), terminal, cancellationToken);
            }

            return Unicast(parse, cancellationToken);
        });
        return command;

        Task<int> Unicast(ParseResult parse, CancellationToken cancellationToken) => session.RunAsync(parse, terminal, options => shape.Configure(parse, options), async call =>
        {
            CoapMessage request = shape.Build(parse, CoapCode.Get, call.Uri, session.RequestType(parse));
            PayloadStyle style = shape.Style(parse, terminal);
            int? wanted = parse.GetValue(count);
            Printer printer = new(terminal, style, wanted);

            // The registration blocks until its first response; the deadline (--timeout, Ctrl+C, ICMP) cancels it.
            CoapObservation observation = await Task.Run(() => call.Client.Observe(request, call.Peer, printer.Print, printer.Fail, call.Token)).ConfigureAwait(false);
            try
            {
                if (!observation.IsActive)
                {
                    // RFC 7641 section 3.2: a response without Observe means the server will not notify; it was printed.
                    if (printer.First is { IsSuccess: true })
                    {
                        terminal.WriteWarning($"{call.Uri.GetLeftPart(UriPartial.Path)} is not observable: the server answered without an Observe option.");
                    }

                    return printer.First is { } only ? ExitCodes.For(only.Code) : ExitCodes.Error;
                }

                // --timeout bounds the wait for the registration's answer, not the observation.
                call.Deadline.CancelAfter(Timeout.InfiniteTimeSpan);
                Task stop = parse.GetValue(duration) is double seconds ? Task.Delay(TimeSpan.FromSeconds(seconds), cancellationToken) : Task.Delay(Timeout.Infinite, cancellationToken);
                await Task.WhenAny(stop, printer.Done, observation.Completion).ConfigureAwait(false);
            }
            finally
            {
                await DeregisterAsync(observation, session.IsVerbose(parse), terminal).ConfigureAwait(false);
            }

            // Ctrl+C, the count or the duration end an observation as asked; the server ending it (an error, or a
            // response without Observe) or losing it says what happened.
            return printer.Failure is { } failure ? Failed(failure, terminal)
                : printer.Last is { IsSuccess: false } last ? ExitCodes.For(last.Code)
                : ExitCodes.Success;
        }, cancellationToken);
    }

    /// <summary>RFC 7641 section 3.6: GET with Observe=1, and the server's answer awaited (bounded) before the process exits.</summary>
    private static async Task DeregisterAsync(CoapObservation observation, bool verbose, Terminal terminal)
    {
        try
        {
            using CancellationTokenSource wait = new(DeregistrationWait);
            CoapResponse? answer = await observation.DeregisterAsync(wait.Token).ConfigureAwait(false);
            if (verbose && answer is not null)
            {
                terminal.WriteInfo($"deregistered: {answer.Code}");
            }
        }
        catch (Exception e) when (e is OperationCanceledException or CoapNet.Messaging.CoapException)
        {
            // The server learns of it from our RST to its next notification instead (section 3.6).
            terminal.WriteWarning($"the server did not answer the deregistration ({e.Message}); it will stop at its next notification.");
        }
    }

    private static int Failed(Exception failure, Terminal terminal)
    {
        terminal.WriteError($"the observation ended: {failure.Message}");
        return failure is CoapNet.Messaging.CoapTimeoutException ? ExitCodes.NoAnswer : ExitCodes.Error;
    }

    /// <summary>Prints each notification as it arrives (the library calls it one at a time, in order) and counts them.</summary>
    private sealed class Printer(Terminal terminal, PayloadStyle style, int? wanted)
    {
        private readonly TaskCompletionSource _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _count;

        /// <summary>Completes when --count notifications have been printed.</summary>
        public Task Done => _done.Task;

        /// <summary>The registration's response.</summary>
        public CoapResponse? First { get; private set; }

        /// <summary>The latest notification.</summary>
        public CoapResponse? Last { get; private set; }

        /// <summary>What ended the observation after its first response, if something did.</summary>
        public Exception? Failure { get; private set; }

        public void Print(CoapResponse response)
        {
            if (wanted is int limit && _count >= limit)
            {
                return;
            }

            _count++;
            First ??= response;
            Last = response;

            // The status and sequence number say which notification this is, where a person reads them.
            if (terminal.OutputIsTerminal || !response.IsSuccess)
            {
                string observe = response.Observe is uint sequence ? " Observe=" + sequence.ToString(CultureInfo.InvariantCulture) : string.Empty;
                terminal.WriteInfo($"{response.Code}{observe}{(response.ContentFormat is ushort ct ? " (" + ContentFormats.Describe(ct) + ")" : string.Empty)}");
            }

            if (response.IsSuccess)
            {
                terminal.WritePayload(response.Payload, response.ContentFormat, style, separated: true);
            }
            else if (!response.Payload.IsEmpty)
            {
                terminal.WriteInfo(response.GetPayloadString());
            }

            if (_count == wanted)
            {
                _done.TrySetResult();
            }
        }

        public void Fail(Exception failure) => Failure = failure;
    }
}
