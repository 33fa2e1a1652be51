// coap: a command-line CoAP client and file server on CoapNet. See `coap --help`.
return await CoapNet.Cli.CoapCommandLine.RunAsync(args).ConfigureAwait(false);
