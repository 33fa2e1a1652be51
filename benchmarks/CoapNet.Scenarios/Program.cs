// Whole-stack scenarios: a real server on loopback, real sockets, numbers printed as a table.
//   dotnet run -c Release --project benchmarks/CoapNet.Scenarios -- slow-senders|handler-wait|alloc-per-request|client-load|observe|transfer|separate-ack|dtls|dtls-memory|dtls-handshakes|tls|oscore|qblock|nbiot|websockets|fleet-observers|fleet-moves [options]
// "slow-senders-peer" is the child process that slow-senders starts to hold the slow connections, "websockets-server" the
// server that websockets starts.
using CoapNet.Scenarios;

if (args.Length == 0 || args[0] is "-h" or "--help")
{
    Console.WriteLine("Usage: CoapNet.Scenarios slow-senders|handler-wait|alloc-per-request|client-load|observe|transfer|separate-ack|dtls|dtls-memory|dtls-handshakes|tls|oscore|qblock|nbiot|websockets|fleet-observers|fleet-moves [options]   (SCENARIO --help lists them)");
    return args.Length == 0 ? 2 : 0;
}

string[] rest = args[1..];
try
{
    return args[0] switch
    {
        "slow-senders" => await SlowSendersScenario.RunAsync(SlowSendersOptions.Parse(rest)),
        "slow-senders-peer" => await SlowSenderPeer.RunAsync(rest),
        "handler-wait" => await HandlerWaitScenario.RunAsync(rest),
        "alloc-per-request" => await AllocPerRequestScenario.RunAsync(rest),
        "client-load" => await ClientLoadScenario.RunAsync(rest),
        "observe" => await ObserveScenario.RunAsync(rest),
        "transfer" => await TransferScenario.RunAsync(rest),
        "separate-ack" => await SeparateAckScenario.RunAsync(rest),
        "dtls" => await DtlsScenario.RunAsync(rest),
        "dtls-memory" => await DtlsMemoryScenario.RunAsync(rest),
        "dtls-handshakes" => await DtlsHandshakeScenario.RunAsync(rest),
        "tls" => await TlsScenario.RunAsync(rest),
        "oscore" => await OscoreScenario.RunAsync(rest),
        "qblock" => await QBlockScenario.RunAsync(rest),
        "nbiot" => await NbIotScenario.RunAsync(rest),
        "websockets" => await WebSocketsScenario.RunAsync(rest),
        "websockets-server" => await WebSocketsServer.RunAsync(),
        "fleet-observers" => await FleetObserversScenario.RunAsync(rest),
        "fleet-moves" => await FleetMovesScenario.RunAsync(rest),
        _ => Fail($"Unknown scenario '{args[0]}'. Known: slow-senders, handler-wait, alloc-per-request, client-load, observe, transfer, separate-ack, dtls, dtls-memory, dtls-handshakes, tls, oscore, qblock, nbiot, websockets, fleet-observers, fleet-moves."),
    };
}
catch (ArgumentException exception)
{
    return Fail(exception.Message);
}

static int Fail(string message)
{
    Console.Error.WriteLine(message);
    return 2;
}
