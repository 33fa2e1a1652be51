namespace CoapNet.Samples.Hosted;

/// <summary>A scoped service: a new one for each request, disposed with the request's scope.</summary>
public sealed class Greeter(VisitCounter counter)
{
    /// <summary>The greeting for this request.</summary>
    /// <returns>The text.</returns>
    public string Greet() => $"Hello, CoAP! You are visitor {counter.Next()}.";
}
