using System.Reflection;
using CoapNet.Client;
using CoapNet.Configuration;
using CoapNet.Dtls.Configuration;
using CoapNet.Hosting;
using CoapNet.Server;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace CoapNet.Tests.Hosting;

/// <summary>
/// Configuration that refuses what it does not know: a key under "Coap" that is not a setting stops the start with its
/// full path and the nearest known name, a key of an earlier version says where its setting went, a package's keys are
/// known once the package is added, and a value that cannot be used names its path without quoting it.
/// </summary>
public sealed class ConfigurationKeysTests
{
    [Theory]
    [InlineData("Coap:MaxPendingRequest", "Coap:MaxPendingRequest is not a setting; did you mean MaxPendingRequests?")]
    [InlineData("Coap:Endpoint:TransmisionParameters:AckTimeout", "Coap:Endpoint:TransmisionParameters is not a setting; did you mean TransmissionParameters?")]
    [InlineData("Coap:Endpoint:TransmissionParameters:AckTimeOut", null)]
    [InlineData("Coap:Endpoints:udp:Uri", "Coap:Endpoints:udp:Uri is not a setting; did you mean Url?")]
    [InlineData("Coap:Endpoints:udp:Endpoint:MaxPeer", "Coap:Endpoints:udp:Endpoint:MaxPeer is not a setting; did you mean MaxPeers?")]
    [InlineData("Coap:Client:UseNonConfirmabel", "Coap:Client:UseNonConfirmabel is not a setting; did you mean UseNonConfirmable?")]
    [InlineData("Coap:Client:Tls:Certificate", "Coap:Client:Tls:Certificate is not a setting; did you mean CertificateFile?")]
    [InlineData("Coap:Frobnicate", "Coap:Frobnicate is not a setting; Coap takes MaxPendingRequests, MaxDegreeOfParallelism, LoadSheddingMaxAge, Endpoints, Endpoint, Udp, *")]
    [InlineData("Coap:Tls:CertificateFile", "Coap:Tls is no longer a setting: a coaps+tcp endpoint is a section of Coap:Endpoints with its certificate in its Tls section*")]
    [InlineData("Coap:TcpEndpoints:0", "Coap:TcpEndpoints is no longer a setting: endpoints are sections of Coap:Endpoints, each with its address in Url*")]
    [InlineData("Coap:Dtls:PskKeys:0:Identity", "Coap:Dtls is no longer a setting: a coaps endpoint is a section of Coap:Endpoints with its credentials in its Dtls section*")]
    [InlineData("Coap:Udp:SocketReceiveBufferSize:Max", "Coap:Udp:SocketReceiveBufferSize is a value, not a section: it takes no keys below it.")]
    public void AKeyThatIsNotASettingStopsTheStartWithItsPathAndTheNearestName(string key, string? said)
    {
        Dictionary<string, string?> settings = new() { ["Coap:Endpoints:udp:Url"] = "coap://127.0.0.1:0", [key] = "1" };

        Action server = () => BoundOptions.Server(settings);
        Action client = () => BoundOptions.Client(settings);

        if (said is null)
        {
            server.Should().NotThrow("configuration keys compare without regard to case");
            return;
        }

        server.Should().Throw<CoapConfigurationException>().WithMessage(said);
        client.Should().Throw<CoapConfigurationException>("a client's registration checks the same section").WithMessage(said);
    }

    [Fact]
    public void EveryKeyThatIsNotASettingIsNamedAtOnce()
    {
        Action bind = () => BoundOptions.Server(new() { ["Coap:MaxPendingRequest"] = "5", ["Coap:Endpoint:MaxPeer"] = "5" });

        bind.Should().Throw<CoapConfigurationException>().Which.Problems.Should().Equal(
            "Coap:Endpoint:MaxPeer is not a setting; did you mean MaxPeers?", "Coap:MaxPendingRequest is not a setting; did you mean MaxPendingRequests?");
    }

    [Fact]
    public void APackagesSectionIsKnownOnceThePackageIsAdded()
    {
        Dictionary<string, string?> settings = new()
        {
            ["Coap:Endpoints:secure:Url"] = "coaps://127.0.0.1:0",
            ["Coap:Endpoints:secure:Dtls:PskKeys:0:Identity"] = "device-1",
            ["Coap:Endpoints:secure:Dtls:PskKeys:0:Key"] = "secret",
            ["Coap:Client:Dtls:PskIdentity"] = "device-1",
            ["Coap:Client:Dtls:PskKey"] = "secret",
        };

        Action withoutPackage = () => Resolve(settings, services => services.AddCoapServer());
        Action misspelled = () => Resolve(new(settings) { ["Coap:Endpoints:secure:Dtls:MaxSesions"] = "5" }, services => services.AddCoapServer().Services.AddCoapsEndpoints().AddCoapsClient());

        withoutPackage.Should().Throw<CoapConfigurationException>().Which.Problems.Should().Equal(
            "Coap:Client:Dtls is not a setting; did you mean Tls?", "Coap:Endpoints:secure:Dtls is not a setting; did you mean Tls?");
        misspelled.Should().Throw<CoapConfigurationException>().WithMessage("Coap:Endpoints:secure:Dtls:MaxSesions is not a setting; did you mean MaxSessions?");
        Resolve(settings, services => services.AddCoapServer().Services.AddCoapsEndpoints().AddCoapsClient()).ListenOptions
            .Should().ContainSingle().Which.ToString().Should().Be("coaps://127.0.0.1:0 (Coap:Endpoints:secure)");
    }

    [Fact]
    public void ASecretThatCannotBeUsedNamesItsPathAndIsNeverQuoted()
    {
        // Keys in base64 are no setting: a binder would read the text key that way and quote it when it is not base64.
        Action asBytes = () => ClientWithDtls(new() { ["Coap:Client:Dtls:PskIdentity"] = "x", ["Coap:Client:Dtls:PskKeyBytes"] = "top-secret-value" });
        Action asText = () => ClientWithDtls(new() { ["Coap:Client:Dtls:PskIdentity"] = "x", ["Coap:Client:Dtls:PskKey"] = "top-secret-value!" });
        Action asHex = () => ClientWithDtls(new() { ["Coap:Client:Dtls:PskIdentity"] = "x", ["Coap:Client:Dtls:PskKeyHex"] = "top-secret-value" });

        asBytes.Should().Throw<CoapConfigurationException>().WithMessage("Coap:Client:Dtls:PskKeyBytes is not a setting; did you mean PskKey*").Which.Message.Should().NotContain("top-secret-value");
        asText.Should().NotThrow("a key as text is any text, never read as base64");
        asHex.Should().Throw<FormatException>().WithMessage("Coap:Client:Dtls:PskKeyHex is not hexadecimal.");
    }

    private static void ClientWithDtls(Dictionary<string, string?> settings)
    {
        using ServiceProvider provider = BoundOptions.Services(settings, services => services.AddCoapClient().AddCoapsClient());
        _ = provider.GetRequiredService<IOptions<CoapClientOptions>>().Value;
    }

    [Fact]
    public void ASettingThePackagesOptionsRefuseIsNamedByItsSection()
    {
        Action noCredential = () => Resolve(
            new() { ["Coap:Endpoints:secure:Url"] = "coaps://127.0.0.1:0", ["Coap:Endpoints:secure:Dtls:MaxSessions"] = "10" },
            services => services.AddCoapServer().Services.AddCoapsEndpoints());

        noCredential.Should().Throw<FormatException>().WithMessage("Coap:Endpoints:secure:Dtls: PskKeys or RawPublicKeyPair or Certificate must be set*");
    }

    [Fact]
    public void EverySettingOfTheOptionsTypesIsAKnownKey()
    {
        // Every public setting of the options types, at the path configuration binds it from: a section, or a new
        // setting of a kind configuration binds, that the keys do not know would stop every start that uses it.
        List<string> paths = [];
        Walk(typeof(CoapServerOptions), "Coap", paths);
        Walk(typeof(CoapClientOptions), "Coap:Client", paths);
        Walk(typeof(CoapNet.Messaging.CoapEndpointOptions), "Coap:Endpoints:any:Endpoint", paths);
        paths.Should().Contain("Coap:Endpoint:TransmissionParameters:AckTimeout").And.Contain("Coap:Client:Tls:HandshakeTimeout").And.HaveCountGreaterThan(80);
        IConfiguration configuration = BoundOptions.Configuration(paths.ToDictionary(path => path, _ => (string?)"1"));
        List<string> problems = [];

        CoapConfiguration.Keys([], []).Check(configuration.GetSection("Coap"), problems);

        problems.Should().BeEmpty();
    }

    private static void Walk(Type type, string path, List<string> paths)
    {
        foreach (PropertyInfo property in type.GetProperties(BindingFlags.Public | BindingFlags.Instance))
        {
            Type value = Nullable.GetUnderlyingType(property.PropertyType) ?? property.PropertyType;
            string name = property.GetCustomAttribute<ConfigurationKeyNameAttribute>()?.Name ?? property.Name;
            if (value.IsPrimitive || value.IsEnum || value == typeof(string) || value == typeof(TimeSpan))
            {
                if (property.SetMethod is { IsPublic: true })
                {
                    paths.Add($"{path}:{name}");
                }
            }
            else if (value.IsClass && !value.IsAbstract && value.Namespace?.StartsWith("CoapNet", StringComparison.Ordinal) == true
                && value.GetConstructor(Type.EmptyTypes) is not null && property.GetMethod is { IsPublic: true })
            {
                Walk(value, $"{path}:{name}", paths);
            }
        }
    }

    private static CoapServerOptions Resolve(Dictionary<string, string?> settings, Action<IServiceCollection> register)
    {
        using ServiceProvider provider = BoundOptions.Services(settings, register);
        return provider.GetRequiredService<IOptions<CoapServerOptions>>().Value;
    }
}
