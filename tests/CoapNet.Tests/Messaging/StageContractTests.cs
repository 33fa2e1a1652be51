using System.Net;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// The public stage contract (CoapStage, CoapClientCall, CoapExchange's members for stages), as an application's own
/// stages see it, in virtual time: where a stage added at each position sits and in which order it sees each message,
/// that a stage's own answer and follow-up pass only the stages below it, that each exchange and call keeps features of
/// its own, and that misuse is refused with an error that names it.
/// </summary>
public sealed class StageContractTests : IDisposable
{
    private static readonly IPEndPoint ServerAddress = InMemoryNetwork.EndPoint("10.0.0.2");
    private readonly ManualTimeProvider _time = new();
    private readonly ManualTaskScheduler _scheduler = new();
    private readonly InMemoryNetwork _network;
    private readonly List<IDisposable> _owned = [];
    private readonly List<string> _log = [];

    public StageContractTests() => _network = new InMemoryNetwork(_time);

    public void Dispose()
    {
        _scheduler.RunUntilIdle();
        for (int i = _owned.Count - 1; i >= 0; i--)
        {
            _owned[i].Dispose();
        }
    }

    [Fact]
    public async Task StagesAtEveryPositionSeeEachMessageInTheDocumentedOrderOnClientAndServer()
    {
        StartServer(WithRecorders("server"), s =>
        {
            s.MapGet("/big", _ => CoapResponse.Content(new byte[3000], CoapContentFormat.OctetStream));
        });
        CoapClient client = Client(WithRecorders("client"));

        CoapResponse response = await Served(client.GetAsync(new Uri("coap://10.0.0.2/big")));

        response.Payload.Length.Should().Be(3000);

        // From the application down: A and A2 above all (in the order added), B just above block-wise, C just below it,
        // D just below Echo, E below all. Down, the first sees a message first; up, the last. Block-wise's follow-ups
        // and its answers from a stored body pass only the stages below it: C, D and E.
        string[] all = ["A", "A2", "B", "C", "D", "E"];
        string[] belowBlockwise = ["C", "D", "E"];
        Seen("client").Should().Equal([
            .. Down(all, "request down GET"),
            .. Up(belowBlockwise, "response up 2.05 block2=0+ 1024 B"),
            .. Down(belowBlockwise, "request down GET block2=1"),
            .. Up(belowBlockwise, "response up 2.05 block2=1+ 1024 B"),
            .. Down(belowBlockwise, "request down GET block2=2"),
            .. Up(belowBlockwise, "response up 2.05 block2=2 952 B"),
            .. Up(["A", "A2", "B"], "response up 2.05 3000 B"),
        ]);
        Seen("server").Should().Equal([
            .. Up(all, "request up GET"),
            .. Down(["A", "A2", "B"], "response down 2.05 3000 B"),
            .. Down(belowBlockwise, "response down 2.05 block2=0+ 1024 B"),
            .. Up(belowBlockwise, "request up GET block2=1"),
            .. Down(belowBlockwise, "response down 2.05 block2=1+ 1024 B"),
            .. Up(belowBlockwise, "request up GET block2=2"),
            .. Down(belowBlockwise, "response down 2.05 block2=2 952 B"),
        ]);
    }

    [Fact]
    public async Task StagesAboveAndBelowAllSeeEveryMessageOfABlockwiseObservationInBothDirections()
    {
        int version = 0;
        CoapServer server = StartServer(TopAndWire("server"), s => s.MapGet("/big", _ =>
        {
            byte[] body = new byte[3000];
            body[0] = (byte)Volatile.Read(ref version);
            return CoapResponse.Content(body, CoapContentFormat.OctetStream);
        }).Observable());
        CoapClient client = Client(TopAndWire("client"));

        // Read before the observation ends: its deregistration (Observe=1) is answered on the server's own time.
        await using IAsyncEnumerator<CoapResponse> observation = client.ObserveAsync(new Uri("coap://10.0.0.2/big")).GetAsyncEnumerator();
        (await Served(observation.MoveNextAsync().AsTask())).Should().BeTrue();
        Interlocked.Increment(ref version);
        server.NotifyObservers("/big").Should().Be(1);
        (await Served(observation.MoveNextAsync().AsTask())).Should().BeTrue();
        observation.Current.Payload.Length.Should().Be(3000);

        // Client, above block-wise: the caller's registration goes down once; each representation comes up whole.
        Seen("client Top").Should().Equal(
            "request down GET observe=0",
            "response up 2.05 observe=2 3000 B",
            "response up 2.05 observe=3 3000 B");

        // Client, nearest the wire: the registration and each follow-up block request down, every block up (RFC 7959
        // section 2.6: the later blocks of a notification are fetched without Observe).
        string[] blocks =
        [
            "request down GET block2=1",
            "response up 2.05 block2=1+ 1024 B",
            "request down GET block2=2",
            "response up 2.05 block2=2 952 B",
        ];
        Seen("client Wire").Should().Equal([
            "request down GET observe=0",
            "response up 2.05 observe=2 block2=0+ 1024 B",
            .. blocks,
            "response up 2.05 observe=3 block2=0+ 1024 B",
            .. blocks,
        ]);

        // Server, above block-wise: the registration comes up; the handler's whole bodies go down (the notification's
        // runs the handler again without a request coming up); later blocks are answered below, from the stored body.
        Seen("server Top").Should().Equal(
            "request up GET observe=0",
            "response down 2.05 3000 B",
            "response down 2.05 3000 B");

        // Server, nearest the wire: every request comes up, every block goes down, the stage's own answers included.
        string[] served =
        [
            "request up GET block2=1",
            "response down 2.05 block2=1+ 1024 B",
            "request up GET block2=2",
            "response down 2.05 block2=2 952 B",
        ];
        Seen("server Wire").Should().Equal([
            "request up GET observe=0",
            "response down 2.05 observe=2 block2=0+ 1024 B",
            .. served,
            "response down 2.05 observe=3 block2=0+ 1024 B",
            .. served,
        ]);
    }

    [Fact]
    public void AStagePlacedByTheQBlockNameSitsWhereQBlockWouldWhenItIsOff()
    {
        // Q-Block is off by default; its name still places a stage, just above block-wise.
        CoapEndpointOptions options = new CoapEndpointOptions { TimeProvider = _time }
            .UseStage("AboveQBlock", _ => new Recorder(_log, "x", "AboveQBlock"), CoapStagePosition.Above(CoapStageNames.QBlock));
        using CoapEndpoint endpoint = new(_network.CreateTransport("10.0.0.5"), options);

        endpoint.Exchanges.IndexOf(FindStage(endpoint, "AboveQBlock")).Should().Be(0);
        endpoint.Exchanges.IndexOf(endpoint.Blockwise).Should().Be(1);
    }

    [Fact]
    public async Task AStagesOwnAnswerAndFollowUpPassOnlyTheStagesBelowIt()
    {
        StartServer(options => options
            .UseStage("Top", _ => new Recorder(_log, "server", "Top"), CoapStagePosition.AboveAll)
            .UseStage("Answerer", _ => new AnsweringStage("/stage"), CoapStagePosition.Below(CoapStageNames.Observe))
            .UseStage("Wire", _ => new Recorder(_log, "server", "Wire"), CoapStagePosition.BelowAll), s =>
        {
            s.MapGet("/other", _ => CoapResponse.Content("other"));
        });
        CoapClient client = Client(options => options
            .UseStage("Top", _ => new Recorder(_log, "client", "Top"), CoapStagePosition.AboveAll)
            .UseStage("Redirect", _ => new RedirectingStage("/stage"), CoapStagePosition.Below(CoapStageNames.Observe))
            .UseStage("Wire", _ => new Recorder(_log, "client", "Wire"), CoapStagePosition.BelowAll));

        CoapResponse response = await Served(client.GetAsync(new Uri("coap://10.0.0.2/missing")));

        response.Code.Should().Be(CoapCode.Content);
        response.GetPayloadString().Should().Be("from the stage");

        // The client's follow-up and its answer pass the stage below the one that sent it, never the one above; the
        // caller sees the follow-up's answer only. The server's stage answers its request below itself only.
        Seen("client Top").Should().Equal("request down GET /missing", "response up 2.05 14 B");
        Seen("client Wire").Should().Equal("request down GET /missing", "response up 4.04", "request down GET /stage", "response up 2.05 14 B");
        Seen("server Top").Should().Equal("request up GET /missing", "response down 4.04");
        Seen("server Wire").Should().Equal("request up GET /missing", "response down 4.04", "request up GET /stage", "response down 2.05 14 B");
    }

    [Fact]
    public async Task EachExchangeAndCallKeepsFeaturesOfItsOwn()
    {
        List<string> seen = [];
        StartServer(options => options
            .UseStage("Tagger", _ => new TaggingStage<Note>(seen, "Tagger", path => new Note(path)), CoapStagePosition.AboveAll)
            .UseStage("Other", _ => new TaggingStage<OtherNote>(seen, "Other", path => new OtherNote(path + ":other")), CoapStagePosition.BelowAll), s =>
        {
            s.MapGet("/a", _ => CoapResponse.Content("a"));
            s.MapGet("/b", _ => CoapResponse.Content("b"));
        });
        CoapClient client = Client(options => options);

        Task<CoapResponse> first = client.GetAsync(new Uri("coap://10.0.0.2/a"));
        Task<CoapResponse> second = client.GetAsync(new Uri("coap://10.0.0.2/b"));
        await Served(first);
        await Served(second);

        // Each stage finds its own feature on the way down, set on the way up of the same exchange, untouched by the
        // other stage's type, by the other request, and by the lookups of a type that was never set.
        seen.Should().BeEquivalentTo("Tagger /a", "Other /a:other", "Tagger /b", "Other /b:other");
        seen.Should().HaveCount(4);
    }

    [Fact]
    public void FeaturesAreKeyedByTheTypeArgumentAndEmptyUntilSet()
    {
        CoapExchange exchange = new(new CoapMessage { Code = CoapCode.Get }, new DetachedChannel());
        exchange.Features.Get<Note>().Should().BeNull();

        Note note = new("one");
        exchange.Features.Set<INote>(note);
        exchange.Features.Get<Note>().Should().BeNull("a feature is found by the type it was set as");
        exchange.Features.Get<INote>().Should().BeSameAs(note);

        exchange.Features.Set(new Note("two"));
        exchange.Features.Get<Note>()!.Text.Should().Be("two");
        exchange.Features.Get<INote>().Should().BeSameAs(note);

        exchange.Features.Set<INote>(null);
        exchange.Features.Get<INote>().Should().BeNull();
        exchange.Features.Get<Note>()!.Text.Should().Be("two");

        CoapExchange further = exchange.ForFurtherResponse(new SilentListener());
        further.Features.Get<Note>().Should().BeNull("a further response's exchange starts with features of its own");
        further.IsFurtherResponse.Should().BeTrue();
        exchange.IsFurtherResponse.Should().BeFalse();

        default(CoapFeatures).Get<Note>().Should().BeNull();
        Action set = () => default(CoapFeatures).Set(note);
        set.Should().Throw<InvalidOperationException>();
    }

    [Fact]
    public void AnExchangeStaysFiftySixBytes()
    {
        // Every request allocates one (issue 11): its features cost a field, not an object, until one is set.
        CoapMessage request = new() { Code = CoapCode.Get };
        DetachedChannel channel = new();
        CoapExchange[] kept = new CoapExchange[1000];
        _ = new CoapExchange(request, channel);
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < kept.Length; i++)
        {
            kept[i] = new CoapExchange(request, channel);
        }

        long perExchange = (GC.GetAllocatedBytesForCurrentThread() - before) / kept.Length;
        kept[^1].Features.Get<Note>().Should().BeNull();
        perExchange.Should().BeLessThanOrEqualTo(56);
    }

    [Fact]
    public async Task AFeatureSetOnACallIsSeenBelowAndAFollowUpHasFeaturesOfItsOwn()
    {
        List<string> seen = [];
        StartServer(options => options, s =>
        {
            s.MapGet("/x", _ => CoapResponse.Content("x"));
            s.MapGet("/y", _ => CoapResponse.Content("y"));
        });
        CoapClient client = Client(options => options
            .UseStage("Probe", _ => new FeatureProbe(seen), CoapStagePosition.Below(CoapStageNames.Observe))
            .UseStage("Reader", _ => new FeatureReader(seen), CoapStagePosition.BelowAll));

        CoapResponse response = await Served(client.GetAsync(new Uri("coap://10.0.0.2/x")));

        response.GetPayloadString().Should().Be("y");
        seen.Should().Equal("Reader GET /x: call's", "Reader GET /y: none", "Probe answer to /x: call's");
    }

    [Fact]
    public void UseStageRefusesANullABlankOrATakenNameAndAnUnknownAnchor()
    {
        CoapEndpointOptions options = new();
        Func<CoapStageContext, CoapStage> factory = _ => new Recorder(_log, "x", "x");

        Action nullName = () => options.UseStage(null!, factory, CoapStagePosition.AboveAll);
        nullName.Should().Throw<ArgumentNullException>().WithParameterName("name");
        Action blank = () => options.UseStage(" ", factory, CoapStagePosition.AboveAll);
        blank.Should().Throw<ArgumentException>().WithParameterName("name");
        Action nullFactory = () => options.UseStage("Mine", null!, CoapStagePosition.AboveAll);
        nullFactory.Should().Throw<ArgumentNullException>().WithParameterName("factory");
        Action nullPosition = () => options.UseStage("Mine", factory, null!);
        nullPosition.Should().Throw<ArgumentNullException>().WithParameterName("position");
        Action nullAnchor = () => CoapStagePosition.Below(null!);
        nullAnchor.Should().Throw<ArgumentNullException>().WithParameterName("name");

        Action builtIn = () => options.UseStage(CoapStageNames.Blockwise, factory, CoapStagePosition.AboveAll);
        builtIn.Should().Throw<ArgumentException>().WithMessage("*'Blockwise'*already*").WithParameterName("name");

        options.UseStage("Mine", factory, CoapStagePosition.BelowAll);
        Action twice = () => options.UseStage("Mine", factory, CoapStagePosition.AboveAll);
        twice.Should().Throw<ArgumentException>().WithMessage("*'Mine'*already*");

        Action unknown = () => options.UseStage("Later", factory, CoapStagePosition.Above("Oscore"));
        unknown.Should().Throw<ArgumentException>().WithMessage("*'Oscore'*Blockwise*Mine*").WithParameterName("position");
    }

    [Fact]
    public void AFactoryThatReturnsNullOrAStageAnotherEndpointHoldsIsRefusedByTheStagesName()
    {
        Action none = () => _ = new CoapEndpoint(
            _network.CreateTransport("10.0.0.6"),
            new CoapEndpointOptions().UseStage("Empty", _ => null!, CoapStagePosition.AboveAll));
        none.Should().Throw<ArgumentException>().WithMessage("*'Empty'*returned null*");

        // One stage at two places of one chain would see each message twice.
        Recorder twice = new(_log, "x", "Twice");
        Action both = () => _ = new CoapEndpoint(
            _network.CreateTransport("10.0.0.10"),
            new CoapEndpointOptions().UseStage("First", _ => twice, CoapStagePosition.AboveAll).UseStage("Second", _ => twice, CoapStagePosition.BelowAll));
        both.Should().Throw<ArgumentException>().WithMessage("*'Second'*Recorder*already in an endpoint's chain*");

        // A server makes one chain per endpoint: a factory handing out one stage for both is refused at start.
        Recorder shared = new(_log, "server", "Shared");
        CoapServer server = Own(new CoapServer(new CoapServerOptions
        {
            Scheduler = _scheduler,
            Endpoint = new CoapEndpointOptions { TimeProvider = _time }.UseStage("Shared", _ => shared, CoapStagePosition.BelowAll),
        }.Listen(_network.CreateTransport("10.0.0.7")).Listen(_network.CreateTransport("10.0.0.8"))));
        Action start = server.Start;
        start.Should().Throw<ArgumentException>().WithMessage("*'Shared'*already in an endpoint's chain*new stage*");
    }

    [Fact]
    public async Task AStageOfAnotherEndpointCannotAnswerOrSendFollowUpsHere()
    {
        Recorder stranger = new(_log, "x", "Stranger");
        using CoapEndpoint elsewhere = new(
            _network.CreateTransport("10.0.0.9"),
            new CoapEndpointOptions { TimeProvider = _time }.UseStage("Stranger", _ => stranger, CoapStagePosition.AboveAll));
        MisusingStage misuse = new(stranger);
        StartServer(options => options.UseStage("Misuse", _ => misuse, CoapStagePosition.AboveAll), s =>
        {
            s.MapGet("/x", _ => CoapResponse.Content("x"));
        });
        CoapClient client = Client(options => options.UseStage("Misuse", _ => new MisusingStage(stranger), CoapStagePosition.AboveAll));

        CoapResponse response = await Served(client.GetAsync(new Uri("coap://10.0.0.2/x")));

        response.GetPayloadString().Should().Be("x");
        misuse.Errors.Should().Equal(
            "RespondFrom: ArgumentException stage",
            "ReplaceRequest: ArgumentException request",
            "ReplaceRequest by a stranger: ArgumentException stage",
            "RequestAt a stranger: ArgumentException stage",
            "EndWithoutResponse twice: InvalidOperationException");
    }

    [Fact]
    public async Task ARequestAStageReplacesIsSeenByTheStagesAboveItOnlyWhileItAndThoseBelowKeepTheOneTheyPassed()
    {
        // As OSCORE puts the decrypted request in place of the protected one (RFC 8613 section 8.2): the stages above and
        // the handler see the replacement, the replacer and the stages below see the received request both ways, so what
        // they answer and keep matches the message on their side. A notification's exchange keeps these views, and a
        // stage below the replacer cannot replace the request after it.
        List<string> seen = [];
        CoapServer server = StartServer(options => options
            .UseStage("Top", _ => new ViewRecorder(seen, "Top"), CoapStagePosition.AboveAll)
            .UseStage("Replacer", _ => new PathReplacer(seen, "/wire", "/app"), CoapStagePosition.Below(CoapStageNames.Observe))
            .UseStage("Wire", _ => new ViewRecorder(seen, "Wire"), CoapStagePosition.BelowAll), s =>
        {
            s.MapGet("/app", request => CoapResponse.Content("handler saw " + request.Message.UriPath)).Observable();
        });
        CoapClient client = Client(options => options);

        await using IAsyncEnumerator<CoapResponse> observation = client.ObserveAsync(new Uri("coap://10.0.0.2/wire")).GetAsyncEnumerator();
        (await Served(observation.MoveNextAsync().AsTask())).Should().BeTrue();
        observation.Current.GetPayloadString().Should().Be("handler saw /app");
        server.NotifyObservers("/app").Should().Be(1);
        (await Served(observation.MoveNextAsync().AsTask())).Should().BeTrue();

        seen.Should().Equal(
            "Wire up /wire",
            "Replacer up /wire",
            "Top up /app",
            "Top down /app (application's /app)",
            "Replacer down /wire (application's /app)",
            "Wire down /wire (application's /app)",
            "Wire replaces after Replacer: InvalidOperationException",
            "Top down /app (application's /app)",
            "Replacer down /wire (application's /app)",
            "Wire down /wire (application's /app)",
            "Wire replaces after Replacer: InvalidOperationException");
    }

    [Fact]
    public async Task ACallsRequestAtEachStageIsTheOneThatStagePassedOnAndOnlyTheWiresCarriesTheToken()
    {
        // As an OSCORE client passes a protected request on in place of the caller's (RFC 8613 section 8.1): the stages
        // above it, whose follow-ups it protects in turn, see what they passed; it and those below, the protected one.
        List<string> seen = [];
        StartServer(options => options, s =>
        {
            s.MapGet("/wire", _ => CoapResponse.Content("wire"));
        });
        CoapClient client = Client(options => options
            .UseStage("Top", _ => new ViewRecorder(seen, "Top"), CoapStagePosition.AboveAll)
            .UseStage("Replacer", _ => new PathReplacer(seen, "/app", "/wire"), CoapStagePosition.Below(CoapStageNames.Observe))
            .UseStage("Wire", _ => new ViewRecorder(seen, "Wire"), CoapStagePosition.BelowAll));

        CoapResponse response = await Served(client.GetAsync(new Uri("coap://10.0.0.2/app")));

        response.GetPayloadString().Should().Be("wire");
        seen.Should().Equal(
            "Wire up /wire token (on the wire /wire)",
            "Replacer up /wire token (on the wire /wire)",
            "Top up /app (on the wire /wire)");
    }

    [Fact]
    public async Task AStageThatThrowsOnARequestGetsItAnswered500AndOnAResponseFailsTheCall()
    {
        StartServer(options => options.UseStage("Throws", _ => new ThrowingStage(), CoapStagePosition.BelowAll), s =>
        {
            s.MapGet("/x", _ => CoapResponse.Content("x"));
        });
        CoapClient plain = Client(options => options);

        (await Served(plain.GetAsync(new Uri("coap://10.0.0.2/throw")))).Code.Should().Be(CoapCode.InternalServerError);

        CoapClient throwing = Client(options => options.UseStage("Throws", _ => new ThrowingStage(), CoapStagePosition.AboveAll), "10.0.0.3");
        Func<Task> awaiting = () => Served(throwing.GetAsync(new Uri("coap://10.0.0.2/x")));
        await awaiting.Should().ThrowAsync<InvalidDataException>().WithMessage("a stage's own reason");
    }

    [Fact]
    public async Task AnObservationsCallExpectsSeveralResponsesAndSaysSoWhenAStageAsksOtherwise()
    {
        ExpectationProbe probe = new();
        StartServer(options => options, s =>
        {
            s.MapGet("/obs", _ => CoapResponse.Content("now")).Observable();
        });
        CoapClient client = Client(options => options.UseStage("Probe", _ => probe, CoapStagePosition.AboveAll));

        await using IAsyncEnumerator<CoapResponse> observation = client.ObserveAsync(new Uri("coap://10.0.0.2/obs")).GetAsyncEnumerator();
        (await Served(observation.MoveNextAsync().AsTask())).Should().BeTrue();

        probe.Seen.Should().Equal("Several", "InvalidOperationException");
    }

    [Fact]
    public async Task ASecondBlockwiseStageBelowAnotherKeepsItsOwnUploadsAndEchoes()
    {
        // An outer block-wise stage (as OSCORE puts one below itself, RFC 8613 section 4.1.3.4) joins the Block1 blocks
        // first; the built-in one above it sees one whole request and cuts the large answer into Block2 blocks.
        byte[] received = [];
        StartServer(options => options
            .UseStage("Between", _ => new Recorder(_log, "server", "Between"), CoapStagePosition.Below(CoapStageNames.Echo))
            .UseStage("OuterBlockwise", context => context.CreateBlockwiseStage(), CoapStagePosition.BelowAll)
            .UseStage("Wire", _ => new Recorder(_log, "server", "Wire"), CoapStagePosition.BelowAll), s =>
        {
            s.MapPost("/upload", request =>
            {
                received = request.Payload.ToArray();
                return CoapResponse.Content(new byte[2500], CoapContentFormat.OctetStream);
            });
        });
        CoapClient client = Client(options => options);
        byte[] body = new byte[3000];
        Random.Shared.NextBytes(body);

        CoapResponse response = await Served(client.PostAsync(new Uri("coap://10.0.0.2/upload"), body, CoapContentFormat.OctetStream));

        response.Code.Should().Be(CoapCode.Content);
        response.Payload.Length.Should().Be(2500);
        received.Should().Equal(body);

        // Below the outer stage every Block1 block passes, answered by it (2.31, then the echo of the last block); above it,
        // between the two, one whole request and the inner stage's Block2 blocks, without a Block1 echo, which is the outer
        // stage's; the client's later Block2 requests are answered by the inner stage, from its stored body.
        Seen("server Wire").Should().Equal(
            "request up POST /upload block1=0+ 1024 B",
            "response down 2.31 block1=0+",
            "request up POST /upload block1=1+ 1024 B",
            "response down 2.31 block1=1+",
            "request up POST /upload block1=2 952 B",
            "response down 2.05 block1=2 block2=0+ 1024 B",
            "request up POST /upload block2=1",
            "response down 2.05 block2=1+ 1024 B",
            "request up POST /upload block2=2",
            "response down 2.05 block2=2 452 B");
        Seen("server Between").Should().Equal(
            "request up POST /upload 3000 B",
            "response down 2.05 block2=0+ 1024 B",
            "request up POST /upload block2=1",
            "response down 2.05 block2=1+ 1024 B",
            "request up POST /upload block2=2",
            "response down 2.05 block2=2 452 B");
    }

    private static IEnumerable<string> Down(string[] names, string what)
    {
        foreach (string name in names)
        {
            yield return $"{name} {what}";
        }
    }

    private static IEnumerable<string> Up(string[] names, string what) => Down([.. Enumerable.Reverse(names)], what);

    private static CoapStage FindStage(CoapEndpoint endpoint, string name) => endpoint.Exchanges.StageNamed(name);

    private Func<CoapEndpointOptions, CoapEndpointOptions> TopAndWire(string side) => options => options
        .UseStage("Top", _ => new Recorder(_log, side, "Top"), CoapStagePosition.AboveAll)
        .UseStage("Wire", _ => new Recorder(_log, side, "Wire"), CoapStagePosition.BelowAll);

    private Func<CoapEndpointOptions, CoapEndpointOptions> WithRecorders(string side) => options => options
        .UseStage("A", _ => new Recorder(_log, side, "A"), CoapStagePosition.AboveAll)
        .UseStage("E", _ => new Recorder(_log, side, "E"), CoapStagePosition.BelowAll)
        .UseStage("B", _ => new Recorder(_log, side, "B"), CoapStagePosition.Above(CoapStageNames.Blockwise))
        .UseStage("C", _ => new Recorder(_log, side, "C"), CoapStagePosition.Below(CoapStageNames.Blockwise))
        .UseStage("D", _ => new Recorder(_log, side, "D"), CoapStagePosition.Below(CoapStageNames.Echo))
        .UseStage("A2", _ => new Recorder(_log, side, "A2"), CoapStagePosition.AboveAll);

    /// <summary>What the recorders of <paramref name="prefix"/> ("client", "server Top") saw, without the prefix.</summary>
    private List<string> Seen(string prefix)
    {
        List<string> seen = [];
        lock (_log)
        {
            foreach (string line in _log)
            {
                if (line.StartsWith(prefix + " ", StringComparison.Ordinal))
                {
                    seen.Add(line[(prefix.Length + 1)..]);
                }
            }
        }

        return seen;
    }

    private CoapServer StartServer(Func<CoapEndpointOptions, CoapEndpointOptions> stages, Action<CoapServer> map)
    {
        CoapServer server = Own(new CoapServer(new CoapServerOptions
        {
            Scheduler = _scheduler,
            Endpoint = stages(new CoapEndpointOptions { TimeProvider = _time }),
        }.Listen(_network.CreateTransport(ServerAddress))));
        map(server);
        server.Start();
        return server;
    }

    private CoapClient Client(Func<CoapEndpointOptions, CoapEndpointOptions> stages, string address = "10.0.0.1")
        => Own(new CoapClient(_network.CreateTransport(address), new CoapClientOptions
        {
            Endpoint = stages(new CoapEndpointOptions { TimeProvider = _time, Random = new Random(5) }),
        }));

    /// <summary>
    /// Settles the server and the network, then awaits <paramref name="pending"/>: the client completes a call off the
    /// thread that received its response (its continuations run asynchronously), so a liveness bound, not a duration.
    /// </summary>
    private async Task<T> Served<T>(Task<T> pending)
    {
        _scheduler.Settle(_network);
        return await pending.WaitAsync(Infrastructure.Wait.DefaultBound);
    }

    private T Own<T>(T disposable)
        where T : IDisposable
    {
        _owned.Add(disposable);
        return disposable;
    }

    private static string Describe(CoapMessage message)
    {
        string text = message.Code.IsRequest ? $"{message.Code.Name}" : message.Code.ToString()[..4];
        if (message.Code.IsRequest && message.UriPath is { Length: > 1 } path && path != "/big")
        {
            text += " " + path;
        }

        if (message.Observe is uint observe)
        {
            text += $" observe={observe}";
        }

        if (message.Block1 is { } sent)
        {
            text += $" block1={sent.Number}{(sent.More ? "+" : string.Empty)}";
        }

        if (message.Block2 is { } block)
        {
            text += $" block2={block.Number}{(block.More ? "+" : string.Empty)}";
        }

        if (!message.Payload.IsEmpty)
        {
            text += $" {message.Payload.Length} B";
        }

        return text;
    }

    private interface ITagged
    {
        string Text { get; }
    }

    private interface INote
    {
        string Text { get; }
    }

    private sealed record Note(string Text) : INote, ITagged;

    private sealed record OtherNote(string Text) : ITagged;

    /// <summary>Records each message that passes it as "side name direction message", in one log shared by all.</summary>
    private sealed class Recorder(List<string> log, string side, string name) : CoapStage
    {
        public override void SendRequest(CoapClientCall call, CoapMessage request, Action<CoapClientCall, CoapMessage> next)
        {
            Record("request down", request);
            next(call, request);
        }

        public override void ReceiveResponse(CoapClientCall call, CoapMessage response, Action<CoapClientCall, CoapMessage> next)
        {
            Record("response up", response);
            next(call, response);
        }

        public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
        {
            Record("request up", exchange.Request);
            next(exchange);
        }

        public override void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next)
        {
            Record("response down", response);
            next(exchange, response);
        }

        private void Record(string what, CoapMessage message)
        {
            lock (log)
            {
                log.Add($"{side} {name} {what} {Describe(message)}");
            }
        }
    }

    /// <summary>A server stage that answers requests for one path itself, below itself only.</summary>
    private sealed class AnsweringStage(string path) : CoapStage
    {
        public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
        {
            if (exchange.Request.UriPath == path)
            {
                exchange.RespondFrom(this, new CoapMessage { Code = CoapCode.Content, Payload = "from the stage"u8.ToArray() });
                return;
            }

            next(exchange);
        }
    }

    /// <summary>A client stage that answers a 4.04 by asking for another path, a follow-up whose answer goes up instead.</summary>
    private sealed class RedirectingStage(string path) : CoapStage
    {
        public override void ReceiveResponse(CoapClientCall call, CoapMessage response, Action<CoapClientCall, CoapMessage> next)
        {
            if (response.Code != CoapCode.NotFound)
            {
                next(call, response);
                return;
            }

            CoapMessage again = call.Request.CopyWithout(CoapOptionNumber.UriPath);
            again.Token = default;
            again.UriPath = path;
            call.SendFollowUp(this, again, answer => next(call, answer));
        }
    }

    /// <summary>Sets a feature of its own type on the way up; reads it on the way down, with any <see cref="INote"/> (never set).</summary>
    private sealed class TaggingStage<T>(List<string> seen, string name, Func<string, T> tag) : CoapStage
        where T : class, ITagged
    {
        public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
        {
            exchange.Features.Set(tag(exchange.Request.UriPath));
            next(exchange);
        }

        public override void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next)
        {
            lock (seen)
            {
                seen.Add($"{name} {exchange.Features.Get<T>()?.Text}{exchange.Features.Get<INote>()?.Text}");
            }

            next(exchange, response);
        }
    }

    /// <summary>Sets a feature on the caller's call, then answers the call with a follow-up for another path.</summary>
    private sealed class FeatureProbe(List<string> seen) : CoapStage
    {
        public override void SendRequest(CoapClientCall call, CoapMessage request, Action<CoapClientCall, CoapMessage> next)
        {
            call.Features.Set(new Note("call's"));
            next(call, request);
        }

        public override void ReceiveResponse(CoapClientCall call, CoapMessage response, Action<CoapClientCall, CoapMessage> next)
        {
            if (call.Request.UriPath != "/x")
            {
                next(call, response);
                return;
            }

            CoapMessage other = call.Request.CopyWithout(CoapOptionNumber.UriPath);
            other.Token = default;
            other.UriPath = "/y";
            call.SendFollowUp(this, other, answer =>
            {
                seen.Add($"Probe answer to /x: {call.Features.Get<Note>()?.Text}");
                next(call, answer);
            });
        }
    }

    /// <summary>Reads the feature of each call that passes it: the caller's, and the follow-up the stage above sent.</summary>
    private sealed class FeatureReader(List<string> seen) : CoapStage
    {
        public override void SendRequest(CoapClientCall call, CoapMessage request, Action<CoapClientCall, CoapMessage> next)
        {
            seen.Add($"Reader GET {request.UriPath}: {call.Features.Get<Note>()?.Text ?? "none"}");
            next(call, request);
        }
    }

    /// <summary>Records the request as this stage sees it (<c>RequestAt</c>): on a server up and down, on a client as its response comes up.</summary>
    private sealed class ViewRecorder(List<string> seen, string name) : CoapStage
    {
        public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
        {
            Add($"{name} up {exchange.RequestAt(this).UriPath}");
            next(exchange);
        }

        public override void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next)
        {
            Add($"{name} down {exchange.RequestAt(this).UriPath} (application's {exchange.Request.UriPath})");
            if (name == "Wire")
            {
                try
                {
                    exchange.ReplaceRequest(this, new CoapMessage { Code = CoapCode.Get });
                }
                catch (InvalidOperationException e)
                {
                    Add($"{name} replaces after Replacer: {e.GetType().Name}");
                }
            }

            next(exchange, response);
        }

        public override void ReceiveResponse(CoapClientCall call, CoapMessage response, Action<CoapClientCall, CoapMessage> next)
        {
            CoapMessage passed = call.RequestAt(this);
            Add($"{name} up {passed.UriPath}{(passed.Token.IsEmpty ? string.Empty : " token")} (on the wire {call.Request.UriPath})");
            next(call, response);
        }

        private void Add(string line)
        {
            lock (seen)
            {
                seen.Add(line);
            }
        }
    }

    /// <summary>Passes on a request for <paramref name="to"/> in place of one for <paramref name="from"/>, up on a server, down on a client.</summary>
    private sealed class PathReplacer(List<string> seen, string from, string to) : CoapStage
    {
        public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
        {
            CoapMessage request = exchange.RequestAt(this);
            lock (seen)
            {
                seen.Add($"Replacer up {request.UriPath}");
            }

            if (request.UriPath == from)
            {
                exchange.ReplaceRequest(this, Moved(request));
            }

            next(exchange);
        }

        public override void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next)
        {
            lock (seen)
            {
                seen.Add($"Replacer down {exchange.RequestAt(this).UriPath} (application's {exchange.Request.UriPath})");
            }

            next(exchange, response);
        }

        public override void SendRequest(CoapClientCall call, CoapMessage request, Action<CoapClientCall, CoapMessage> next)
            => next(call, request.UriPath == from ? Moved(request) : request);

        public override void ReceiveResponse(CoapClientCall call, CoapMessage response, Action<CoapClientCall, CoapMessage> next)
        {
            CoapMessage passed = call.RequestAt(this);
            lock (seen)
            {
                seen.Add($"Replacer up {passed.UriPath}{(passed.Token.IsEmpty ? string.Empty : " token")} (on the wire {call.Request.UriPath})");
            }

            next(call, response);
        }

        private CoapMessage Moved(CoapMessage request)
        {
            CoapMessage moved = request.CopyWithout(CoapOptionNumber.UriPath);
            moved.UriPath = to;
            return moved;
        }
    }

    /// <summary>Tries what a stage must not do, on the server, and records the errors.</summary>
    private sealed class MisusingStage(CoapStage stranger) : CoapStage
    {
        public List<string> Errors { get; } = [];

        public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
        {
            Try("RespondFrom", () => exchange.RespondFrom(stranger, new CoapMessage { Code = CoapCode.Content }));
            Try("ReplaceRequest", () => exchange.ReplaceRequest(this, new CoapMessage { Code = CoapCode.Content }));
            Try("ReplaceRequest by a stranger", () => exchange.ReplaceRequest(stranger, new CoapMessage { Code = CoapCode.Get }));
            Try("RequestAt a stranger", () => exchange.RequestAt(stranger));
            next(exchange);
        }

        public override void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next)
        {
            next(exchange, response);
            CoapExchange further = exchange.ForFurtherResponse(new SilentListener());
            further.EndWithoutResponse();
            Try("EndWithoutResponse twice", further.EndWithoutResponse);
        }

        public override void SendRequest(CoapClientCall call, CoapMessage request, Action<CoapClientCall, CoapMessage> next)
        {
            Action foreign = () => call.SendFollowUp(stranger, request, _ => { });
            foreign.Should().Throw<ArgumentException>().WithParameterName("from");
            Action passUp = () => call.PassUp(stranger, request);
            passUp.Should().Throw<ArgumentException>().WithParameterName("from");
            Action requestAt = () => call.RequestAt(stranger);
            requestAt.Should().Throw<ArgumentException>().WithParameterName("stage");
            next(call, request);
        }

        private void Try(string what, Action action)
        {
            try
            {
                action();
                Errors.Add(what + ": no error");
            }
            catch (ArgumentException e)
            {
                Errors.Add($"{what}: {e.GetType().Name} {e.ParamName}");
            }
            catch (InvalidOperationException e)
            {
                Errors.Add($"{what}: {e.GetType().Name}");
            }
        }
    }

    /// <summary>Throws on requests for /throw (server) and on every response (client).</summary>
    private sealed class ThrowingStage : CoapStage
    {
        public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
        {
            if (exchange.Request.UriPath == "/throw")
            {
                throw new InvalidDataException("a stage's own reason");
            }

            next(exchange);
        }

        public override void ReceiveResponse(CoapClientCall call, CoapMessage response, Action<CoapClientCall, CoapMessage> next)
            => throw new InvalidDataException("a stage's own reason");
    }

    /// <summary>Reads what an observation's call expects, and tries to make it expect one.</summary>
    private sealed class ExpectationProbe : CoapStage
    {
        public List<string> Seen { get; } = [];

        public override void SendRequest(CoapClientCall call, CoapMessage request, Action<CoapClientCall, CoapMessage> next)
        {
            if (request.Observe == 0)
            {
                Seen.Add(call.ExpectedResponses.ToString());
                try
                {
                    call.ExpectedResponses = CoapExpectedResponses.One;
                }
                catch (InvalidOperationException e)
                {
                    Seen.Add(e.GetType().Name);
                }
            }

            next(call, request);
        }
    }

    private sealed class SilentListener : ICoapDeliveryListener
    {
        public void OnDelivered()
        {
        }

        public void OnRejected()
        {
        }

        public void OnFailed(Exception reason)
        {
        }

        public void OnDropped()
        {
        }
    }

    /// <summary>A channel for an exchange that never answers: the features need no layer below.</summary>
    private sealed class DetachedChannel() : CoapNet.Channels.PeerChannel(CoapNet.Channels.CoapPeer.Udp(new IPEndPoint(IPAddress.Loopback, 5683)), isReliable: false)
    {
        public override IMessageLayer Layer => throw new InvalidOperationException("This exchange is not attached to an endpoint.");

        public override bool Fits(CoapNet.Messages.CoapMessage message, int tokenLength) => throw new InvalidOperationException("This exchange is not attached to an endpoint.");
    }
}
