using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using System.Threading;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;

namespace CoapNet.Generators;

/// <summary>Turns one MapX(template, Delegate) call, or one CoapResults.Content&lt;T&gt; call, into a model.</summary>
internal static class EndpointAnalyzer
{
    public const string ExtensionsType = "CoapNet.Endpoints.CoapEndpointRouteBuilderExtensions";
    public const string HostExtensionsType = "CoapNet.Hosting.CoapHostEndpointRouteBuilderExtensions";
    public const string ResultsType = "CoapNet.Endpoints.CoapResults";

    private static readonly Dictionary<string, string> Methods = new()
    {
        ["MapGet"] = "Get",
        ["MapPost"] = "Post",
        ["MapPut"] = "Put",
        ["MapDelete"] = "Delete",
        ["MapFetch"] = "Fetch",
        ["MapPatch"] = "Patch",
        ["MapIPatch"] = "IPatch",
    };

    public static bool IsCandidate(SyntaxNode node)
        => node is InvocationExpressionSyntax { Expression: MemberAccessExpressionSyntax access } invocation
            && ((Methods.ContainsKey(access.Name.Identifier.ValueText) && invocation.ArgumentList.Arguments.Count == 2)
                || (access.Name.Identifier.ValueText is "Content" or "Created" or "Changed" && invocation.ArgumentList.Arguments.Count > 0));

    public static CallModel? Analyze(GeneratorSyntaxContext context, CancellationToken cancellationToken)
    {
        InvocationExpressionSyntax invocation = (InvocationExpressionSyntax)context.Node;
        if (context.SemanticModel.GetSymbolInfo(invocation, cancellationToken).Symbol is not IMethodSymbol method)
        {
            return null;
        }

        IMethodSymbol original = method.ReducedFrom ?? method;
        string container = original.ContainingType.ToDisplayString();
        if (container == ResultsType)
        {
            return AnalyzeResult(method, invocation.GetLocation());
        }

        if ((container != ExtensionsType && container != HostExtensionsType) || original.Parameters.Length != 3
            || original.Parameters[2].Type.ToDisplayString() != "System.Delegate")
        {
            return null;
        }

        return AnalyzeMap(context, invocation, original, container == HostExtensionsType, cancellationToken);
    }

    private static CallModel? AnalyzeResult(IMethodSymbol method, Location location)
    {
        if (method.TypeArguments.Length != 1)
        {
            return null;
        }

        ContractAnalyzer cbor = new();
        ITypeSymbol content = method.TypeArguments[0];
        string? root = cbor.Describe(content, out string? why);
        JsonRoot json = JsonRoot.Of(content, root, why, LocationInfo.From(location));
        return new CallModel(null, default, new EquatableArray<ContractType>([.. cbor.Types]), root is null ? default : new EquatableArray<string>([root]), new EquatableArray<JsonRoot>([json]));
    }

    private static CallModel? AnalyzeMap(GeneratorSyntaxContext context, InvocationExpressionSyntax invocation, IMethodSymbol map, bool host, CancellationToken cancellationToken)
    {
        SemanticModel model = context.SemanticModel;
        string mapName = map.Name;
        List<DiagnosticInfo> diagnostics = [];
        LocationInfo where = LocationInfo.From(invocation.GetLocation());
        string display = $"{mapName} at line {invocation.GetLocation().GetLineSpan().StartLinePosition.Line + 1}";
        ExpressionSyntax argument = invocation.ArgumentList.Arguments[1].Expression;

        // The lambda's or method's own symbol gives the parameters their names and attributes; a variable of a delegate type
        // has only its type's Invoke, whose parameters are named by the type (arg1, arg2) and carry no attributes.
        SymbolInfo info = model.GetSymbolInfo(argument, cancellationToken);
        IMethodSymbol? handler = info.Symbol as IMethodSymbol ?? (info.CandidateSymbols.Length == 1 ? info.CandidateSymbols[0] as IMethodSymbol : null);
        ITypeSymbol? argumentType = model.GetTypeInfo(argument, cancellationToken).Type;
        bool typedDelegate = argumentType is INamedTypeSymbol { TypeKind: TypeKind.Delegate, DelegateInvokeMethod: not null } && argumentType.ToDisplayString() != "System.Delegate";
        string delegateType;
        if (handler is null || handler.MethodKind == MethodKind.DelegateInvoke)
        {
            if (!typedDelegate)
            {
                diagnostics.Add(new DiagnosticInfo(Descriptors.UnknownDelegate.Id, where, new([display, "is a System.Delegate whose parameters are not known at compile time"])));
                return new CallModel(null, new([.. diagnostics]), default, default);
            }

            handler = ((INamedTypeSymbol)argumentType!).DelegateInvokeMethod!;
            delegateType = argumentType!.ToDisplayString(Symbols.Annotated);
        }
        else if (typedDelegate && argument is not (LambdaExpressionSyntax or AnonymousMethodExpressionSyntax))
        {
            delegateType = argumentType!.ToDisplayString(Symbols.Annotated);
        }
        else
        {
            if (handler.Parameters.Any(p => p.RefKind != RefKind.None || p.IsParams || p.HasExplicitDefaultValue) || handler.Parameters.Length > 16)
            {
                diagnostics.Add(new DiagnosticInfo(Descriptors.UnknownDelegate.Id, where, new([display, "has ref, params or default-valued parameters, or more than 16, so it is no Func or Action"])));
                return new CallModel(null, new([.. diagnostics]), default, default);
            }

            // The natural type of a lambda or method group converted to Delegate is this Func or Action (C# 10).
            string arguments = string.Join(", ", handler.Parameters.Select(p => p.Type.ToDisplayString(Symbols.Annotated)));
            delegateType = handler.ReturnsVoid
                ? (handler.Parameters.Length == 0 ? "global::System.Action" : $"global::System.Action<{arguments}>")
                : $"global::System.Func<{(arguments.Length == 0 ? string.Empty : arguments + ", ")}{handler.ReturnType.ToDisplayString(Symbols.Annotated)}>";
        }

        ContractAnalyzer cbor = new();
        List<string> roots = [];
        List<JsonRoot> jsonRoots = [];
        List<ParameterModel> parameters = [];
        string? bodyName = null;
        foreach (IParameterSymbol parameter in handler.Parameters)
        {
            if (Symbols.Inaccessible(parameter.Type) is string inaccessible)
            {
                diagnostics.Add(new DiagnosticInfo(Descriptors.UnsupportedParameter.Id, where, new([parameter.Name, display, inaccessible])));
                continue;
            }

            ParameterModel? bound = Classify(parameter, out string? problem);
            if (bound is null)
            {
                diagnostics.Add(new DiagnosticInfo(Descriptors.UnsupportedParameter.Id, where, new([parameter.Name, display, problem ?? "its type is not supported"])));
                continue;
            }

            if (bound.Kind is BindingKind.Body or BindingKind.BodyText or BindingKind.BodyBytes or BindingKind.BodyMemory or BindingKind.BodyStream)
            {
                if (bodyName is not null)
                {
                    diagnostics.Add(new DiagnosticInfo(Descriptors.SeveralBodies.Id, where, new([bodyName, bound.Name, display])));
                }

                bodyName = bound.Name;
            }

            if (bound.Kind is BindingKind.Body or BindingKind.ServiceOrBody)
            {
                string? key = cbor.Describe(parameter.Type, out string? why);
                if (key is not null)
                {
                    roots.Add(key);
                }
                else if (bound.Kind == BindingKind.Body)
                {
                    diagnostics.Add(new DiagnosticInfo(Descriptors.NoCborContract.Id, where, new([parameter.Type.ToDisplayString(), why ?? "it is not supported"])));
                }

                // A parameter that may be a service is bound from the payload only when no service of its type exists,
                // which is known at run time: only a certain payload's JSON is the build's to warn of.
                if (bound.Kind == BindingKind.Body)
                {
                    jsonRoots.Add(JsonRoot.Of(parameter.Type, key, why, where));
                }
            }

            parameters.Add(bound);
        }

        ITypeSymbol returnType = handler.ReturnType;
        bool isAsync = false;
        string returnName = Symbols.MetadataName(returnType);
        if (returnName is "System.Threading.Tasks.Task" or "System.Threading.Tasks.ValueTask")
        {
            isAsync = true;
            returnType = null!;
        }
        else if (returnName is "System.Threading.Tasks.Task`1" or "System.Threading.Tasks.ValueTask`1")
        {
            isAsync = true;
            returnType = ((INamedTypeSymbol)returnType).TypeArguments[0];
        }

        ResultKind result = ResultKind.Empty;
        string resultName = string.Empty;
        string resultTypeOf = string.Empty;
        if (handler.ReturnsVoid || returnType is null)
        {
            result = ResultKind.Empty;
        }
        else if (Symbols.Inaccessible(returnType) is string inaccessible)
        {
            diagnostics.Add(new DiagnosticInfo(Descriptors.UnsupportedResult.Id, where, new([display, returnType.ToDisplayString(), inaccessible])));
        }
        else
        {
            resultName = returnType.ToDisplayString(Symbols.Annotated);
            resultTypeOf = returnType.WithNullableAnnotation(NullableAnnotation.NotAnnotated).ToDisplayString(Symbols.Plain);
            string metadata = Symbols.MetadataName(returnType);
            if (metadata == "CoapNet.Messages.CoapResponse")
            {
                result = ResultKind.Response;
            }
            else if (metadata == "CoapNet.Endpoints.ICoapResult" || returnType.AllInterfaces.Any(i => Symbols.Is(i, "CoapNet.Endpoints.ICoapResult")))
            {
                result = ResultKind.Result;
            }
            else if (returnType.SpecialType == SpecialType.System_String)
            {
                result = ResultKind.Text;
            }
            else if (returnType is IArrayTypeSymbol { ElementType.SpecialType: SpecialType.System_Byte })
            {
                result = ResultKind.Bytes;
            }
            else if (metadata == "System.ReadOnlyMemory`1" && ((INamedTypeSymbol)returnType).TypeArguments[0].SpecialType == SpecialType.System_Byte)
            {
                result = ResultKind.Memory;
            }
            else if (metadata is "System.Collections.Generic.IAsyncEnumerable`1" || returnType.SpecialType == SpecialType.System_Object)
            {
                diagnostics.Add(new DiagnosticInfo(Descriptors.UnsupportedResult.Id, where, new([display, returnType.ToDisplayString(), "return a concrete type, an ICoapResult or a CoapResponse"])));
            }
            else
            {
                result = ResultKind.Object;
                string? key = cbor.Describe(returnType, out string? why);
                if (key is not null)
                {
                    roots.Add(key);
                }
                else
                {
                    diagnostics.Add(new DiagnosticInfo(Descriptors.NoCborContract.Id, where, new([returnType.ToDisplayString(), why ?? "it is not supported"])));
                }

                jsonRoots.Add(JsonRoot.Of(returnType, key, why, where));
            }
        }

        if (diagnostics.Any(d => Descriptors.ById(d.Id).DefaultSeverity == DiagnosticSeverity.Error))
        {
            return new CallModel(null, new([.. diagnostics]), default, default);
        }

        var location = model.GetInterceptableLocation(invocation, cancellationToken);
        if (location is null)
        {
            return null;
        }

        EndpointModel endpoint = new(
            location.Version,
            location.Data,
            location.GetDisplayLocation(),
            mapName,
            Methods[mapName],
            map.Parameters[0].Type.ToDisplayString(Symbols.Plain),
            host,
            delegateType,
            isAsync,
            result,
            resultName,
            resultTypeOf,
            new EquatableArray<ParameterModel>([.. parameters]));
        return new CallModel(endpoint, new([.. diagnostics]), new EquatableArray<ContractType>([.. cbor.Types]), new EquatableArray<string>([.. roots]), new EquatableArray<JsonRoot>([.. jsonRoots]));
    }

    private static ParameterModel? Classify(IParameterSymbol parameter, out string? problem)
    {
        problem = null;
        ITypeSymbol type = parameter.Type;
        string typeName = type.ToDisplayString(Symbols.Annotated);
        string typeOf = type.WithNullableAnnotation(NullableAnnotation.NotAnnotated).ToDisplayString(Symbols.Plain);
        ITypeSymbol? inner = Symbols.NullableValue(type);
        bool optional = inner is not null || (type.IsReferenceType && parameter.NullableAnnotation == NullableAnnotation.Annotated);
        string metadata = Symbols.MetadataName(type);

        AttributeData? fromRoute = Symbols.Attribute(parameter, "FromRouteAttribute");
        AttributeData? fromQuery = Symbols.Attribute(parameter, "FromQueryAttribute");
        bool fromBody = Symbols.Attribute(parameter, "FromBodyAttribute") is not null;
        bool fromServices = Symbols.Attribute(parameter, "FromServicesAttribute") is not null;
        string name = Symbols.NamedString(fromRoute, "Name") ?? Symbols.NamedString(fromQuery, "Name") ?? parameter.Name;
        string source = fromRoute is not null ? "Route" : fromQuery is not null ? "Query" : "RouteOrQuery";

        ParameterModel Make(BindingKind kind, string from, string? valueType = null)
            => new(name, kind, from, typeName, typeOf, valueType ?? typeOf, optional);

        switch (metadata)
        {
            case "CoapNet.Server.CoapRequest":
                return Make(BindingKind.Request, "Request");
            case "CoapNet.Channels.CoapPeer":
                return Make(BindingKind.Peer, "Peer");
            case "CoapNet.Channels.CoapPeerIdentity":
                return Make(BindingKind.Identity, "Peer");
            case "System.Threading.CancellationToken":
                return Make(BindingKind.CancellationToken, "Context");
            case "CoapNet.Endpoints.CoapEndpointContext":
                return Make(BindingKind.Context, "Context");
        }

        if (fromServices)
        {
            return Make(BindingKind.Service, "Services");
        }

        if (fromBody || metadata is "System.IO.Stream" or "System.ReadOnlyMemory`1" || type is IArrayTypeSymbol { ElementType.SpecialType: SpecialType.System_Byte })
        {
            if (fromRoute is not null || fromQuery is not null)
            {
                problem = "it has both a payload and a route or query attribute";
                return null;
            }

            if (type is IArrayTypeSymbol { ElementType.SpecialType: SpecialType.System_Byte })
            {
                return Make(BindingKind.BodyBytes, "Body");
            }

            return metadata switch
            {
                "System.IO.Stream" => Make(BindingKind.BodyStream, "Body"),
                "System.ReadOnlyMemory`1" when ((INamedTypeSymbol)type).TypeArguments[0].SpecialType == SpecialType.System_Byte => Make(BindingKind.BodyMemory, "Body"),
                _ when type.SpecialType == SpecialType.System_String => Make(BindingKind.BodyText, "Body"),
                _ => Make(BindingKind.Body, "Body"),
            };
        }

        ITypeSymbol simple = inner ?? type;
        if (simple.SpecialType == SpecialType.System_String)
        {
            return Make(BindingKind.String, source);
        }

        if (simple.TypeKind == TypeKind.Enum)
        {
            return Make(inner is null ? BindingKind.Enum : BindingKind.OptionalEnum, source, simple.ToDisplayString(Symbols.Plain));
        }

        if (Symbols.IsSpanParsable(simple))
        {
            return Make(inner is null ? BindingKind.Parsable : BindingKind.OptionalParsable, source, simple.ToDisplayString(Symbols.Plain));
        }

        if (fromRoute is not null || fromQuery is not null)
        {
            problem = $"a route value or Uri-Query argument is text, and {type.ToDisplayString()} does not implement ISpanParsable";
            return null;
        }

        if (type.TypeKind == TypeKind.Interface || type.IsAbstract)
        {
            // Nothing could be read from a payload into an interface: it is a service.
            return Make(BindingKind.Service, "Services");
        }

        return Make(BindingKind.ServiceOrBody, "ServicesOrBody");
    }
}
