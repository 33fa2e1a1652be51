namespace CoapNet.Tests.Infrastructure;

/// <summary>
/// The suite runs once per target framework of the library; each run must be on the runtime it was built for,
/// or the net8.0 build would be tested on the .NET 10 runtime and its differences go unseen.
/// </summary>
public sealed class TargetRuntimeTests
{
    [Fact]
    public void RunsOnTheRuntimeOfItsTargetFramework()
    {
#if NET10_0_OR_GREATER
        const int expected = 10;
#else
        const int expected = 8;
#endif
        Environment.Version.Major.Should().Be(expected, $"this build of the tests targets .NET {expected} ({System.Runtime.InteropServices.RuntimeInformation.FrameworkDescription})");
        typeof(CoapNet.Messages.CoapMessage).Assembly.GetCustomAttributes(typeof(System.Runtime.Versioning.TargetFrameworkAttribute), false)
            .Should().ContainSingle().Which.As<System.Runtime.Versioning.TargetFrameworkAttribute>().FrameworkName
            .Should().Be($".NETCoreApp,Version=v{expected}.0", "the library build under test is the one for this runtime");
    }
}
