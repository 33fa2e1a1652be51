using CoapNet.Messages;
using CoapNet.Server;

namespace CoapNet.Tests.Server;

/// <summary>
/// Route constraints ("{id:int}"): a segment that does not meet one takes another route or none (4.04), on the bytes of
/// the Uri-Path options as on the decoded segments; unknown or conflicting constraints are refused when mapped.
/// </summary>
public sealed class RouteConstraintTests
{
    private static readonly string[] Templates = ["/lamps/{id:int}", "/lamps/{*rest}", "/users/{id:guid}", "/names/{name:alpha}", "/n/{v:double}/{b:bool}/{l:long}"];

    public static TheoryData<string, string?> Paths { get; } = new()
    {
        { "lamps/7", "/lamps/{id:int}" },
        { "lamps/-7", "/lamps/{id:int}" },
        { "lamps/seven", "/lamps/{*rest}" },
        { "lamps/99999999999", "/lamps/{*rest}" },
        { "users/5f0c7b5e-8f7a-4a51-9b38-5d4f4a8f6a10", "/users/{id:guid}" },
        { "users/5f0c", null },
        { "names/desk", "/names/{name:alpha}" },
        { "names/desk2", null },
        { "n/0.5/true/12345678901", "/n/{v:double}/{b:bool}/{l:long}" },
        { "n/0.5/yes/1", null },
    };

    [Theory]
    [MemberData(nameof(Paths))]
    public void ASegmentMatchesOnlyARouteWhoseConstraintItMeets(string path, string? expected)
    {
        CoapRouter router = new();
        foreach (string template in Templates)
        {
            router.GetOrAdd(template);
        }

        CoapMessage request = new() { Code = CoapCode.Get };
        request.UriPath = "/" + path;

        CoapRoute? byBytes = router.Match(request, out Dictionary<string, string>? values);
        CoapRoute? byStrings = router.Match(request.GetUriPathSegments(), out _);

        byBytes?.Template.Should().Be(expected);
        (byBytes is null).Should().Be(expected is null);
        byStrings.Should().BeSameAs(byBytes);
        if (expected == "/lamps/{id:int}")
        {
            values.Should().ContainKey("id", "the value is captured under the name without its constraint");
        }
    }

    [Fact]
    public void AnUnknownConstraintIsRefusedByName()
    {
        Action map = () => new CoapRouter().GetOrAdd("/lamps/{id:integer}");

        map.Should().Throw<ArgumentException>().WithMessage("*'integer'*int, long, bool, guid, double, alpha*");
    }

    [Fact]
    public void TwoTemplatesConstrainingOnePositionDifferentlyAreRefused()
    {
        CoapRouter router = new();
        router.GetOrAdd("/lamps/{id:int}/state");

        Action map = () => router.GetOrAdd("/lamps/{name}/colour");

        map.Should().Throw<ArgumentException>().WithMessage("*'{name}'*differently*");
    }
}
