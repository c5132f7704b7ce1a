/// A verified chunk.
pub async fn chunk(ctx: &Ctx, params: ChunkParams) -> Result<Content, Error> {
    Content::json(&ctx.chunk(params)?)
}
#[doc(hidden)]
#[::groundkit_core::__private::linkme::distributed_slice(
    ::groundkit_core::__private::RESOURCES
)]
#[linkme(crate = ::groundkit_core::__private::linkme)]
static __GROUNDKIT_RESOURCE_CHUNK: ::groundkit_core::__private::ResourceSpec = {
    #[allow(dead_code, clippy::needless_borrow)]
    fn __groundkit_checks(params: &ChunkParams) {
        ::groundkit_core::__private::assert_context::<Ctx>();
        ::groundkit_core::__private::assert_request::<ChunkParams>();
        ::groundkit_core::__private::assert_resource_return::<Result<Content, Error>>();
        ::groundkit_core::__private::path_param(&params.collection);
        ::groundkit_core::__private::path_param(&params.chunk_id);
    }
    #[allow(unused_variables)]
    fn __groundkit_handler<'a>(
        context: &'a ::groundkit_core::__private::ErasedContext,
        arguments: ::groundkit_core::__private::serde_json::Value,
        call: ::groundkit_core::__private::RequestContext,
    ) -> ::groundkit_core::__private::BoxFuture<
        'a,
        ::groundkit_core::__private::core::result::Result<
            ::groundkit_core::__private::Content,
            ::groundkit_core::__private::Error,
        >,
    > {
        ::groundkit_core::__private::std::boxed::Box::pin(async move {
            let context = ::groundkit_core::__private::downcast_context::<Ctx>(context)?;
            let params = ::groundkit_core::__private::parse_arguments::<
                ChunkParams,
            >(arguments)?;
            ::groundkit_core::__private::ResourceReturn::into_content(
                chunk(context, params).await,
            )
        })
    }
    ::groundkit_core::__private::ResourceSpec::new::<
        ::groundkit_core::__private::ReadOnly,
    >(::groundkit_core::__private::ResourceParts {
        name: "chunk",
        title: ::groundkit_core::__private::core::option::Option::None,
        icon: ::groundkit_core::__private::core::option::Option::None,
        summary: "A verified chunk.",
        description: "A verified chunk.",
        mime_type: "application/json",
        uri: ::groundkit_core::__private::UriTemplate {
            template: "grk://{collection}/chunks/{chunk_id}",
            scheme: "grk",
            segments: &[
                ::groundkit_core::__private::Segment::Var("collection"),
                ::groundkit_core::__private::Segment::Literal("chunks"),
                ::groundkit_core::__private::Segment::Var("chunk_id"),
            ],
        },
        route: ::groundkit_core::__private::RestRoute {
            method: ::groundkit_core::__private::HttpMethod::Get,
            path: "/resources/grk/{collection}/chunks/{chunk_id}",
            params: &["collection", "chunk_id"],
        },
        context: ::groundkit_core::__private::type_id::<Ctx>,
        context_name: ::groundkit_core::__private::core::any::type_name::<Ctx>,
        params_schema: ::groundkit_core::__private::input_schema::<ChunkParams>,
        completers: &[],
        handler: __groundkit_handler,
    })
};
