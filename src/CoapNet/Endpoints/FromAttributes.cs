namespace CoapNet.Endpoints;

/// <summary>Binds a handler's parameter from a route value of its template ("{id}").</summary>
[AttributeUsage(AttributeTargets.Parameter)]
public sealed class FromRouteAttribute : Attribute
{
    /// <summary>The route parameter's name, when it differs from the handler parameter's.</summary>
    public string? Name { get; set; }
}

/// <summary>Binds a handler's parameter from a Uri-Query argument ("?page=2"), by the parameter's name unless <see cref="Name"/> says another.</summary>
[AttributeUsage(AttributeTargets.Parameter)]
public sealed class FromQueryAttribute : Attribute
{
    /// <summary>The argument's name, when it differs from the handler parameter's.</summary>
    public string? Name { get; set; }
}

/// <summary>Binds a handler's parameter from the request payload, by its Content-Format (JSON 50, CBOR 60, text 0).</summary>
[AttributeUsage(AttributeTargets.Parameter)]
public sealed class FromBodyAttribute : Attribute
{
}

/// <summary>Binds a handler's parameter from the request's service scope (<see cref="CoapHandlerOptions.Services"/>).</summary>
[AttributeUsage(AttributeTargets.Parameter)]
public sealed class FromServicesAttribute : Attribute
{
}
